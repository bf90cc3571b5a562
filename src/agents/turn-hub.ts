import type { TurnEvent } from './events.ts';
import type { TurnRef } from './run-turn.ts';

export type HubListener = (event: TurnEvent, turn: TurnRef) => void;

/** How long a finished turn's events stay for late subscribers (a page opened just after). */
const KEEP_AFTER_END_MS = 60_000;
/** At most this many events are kept per running turn (a runaway turn does not grow memory). */
const MAX_EVENTS_PER_TURN = 2_000;

/**
 * Fans every observed turn event (except text deltas) out to subscribers by turn id, keeping
 * the events of running turns so a subscriber that arrives mid-turn first gets what it missed.
 * The dashboard's live trace reads it. Listeners must be quick; a throw is swallowed.
 */
export class TurnHub {
  #listeners = new Map<string, Set<HubListener>>();
  #all = new Set<HubListener>();
  #recent = new Map<string, { events: TurnEvent[]; ref: TurnRef; timer?: NodeJS.Timeout }>();

  publish = (event: TurnEvent, turn: TurnRef): void => {
    let kept = this.#recent.get(turn.turnId);
    if (!kept) {
      kept = { events: [], ref: turn };
      this.#recent.set(turn.turnId, kept);
    }
    if (kept.events.length < MAX_EVENTS_PER_TURN) kept.events.push(event);
    if (event.type === 'turn_end' && !kept.timer) {
      kept.timer = setTimeout(() => this.#recent.delete(turn.turnId), KEEP_AFTER_END_MS);
      kept.timer.unref();
    }
    for (const listener of [...(this.#listeners.get(turn.turnId) ?? []), ...this.#all]) {
      try {
        listener(event, turn);
      } catch {
        // A broken subscriber never breaks a turn.
      }
    }
  };

  /** Events of `turnId` so far (replayed first), then each new one; returns the unsubscribe. */
  subscribe(turnId: string, listener: HubListener): () => void {
    const kept = this.#recent.get(turnId);
    if (kept) for (const event of kept.events) listener(event, kept.ref);
    let set = this.#listeners.get(turnId);
    if (!set) {
      set = new Set();
      this.#listeners.set(turnId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(turnId);
    };
  }

  /** Every event of every turn from now on. */
  subscribeAll(listener: HubListener): () => void {
    this.#all.add(listener);
    return () => this.#all.delete(listener);
  }
}
