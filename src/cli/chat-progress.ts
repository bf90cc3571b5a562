import type { TurnEvent } from '../agents/index.ts';

type Output = { write(text: string): unknown; isTTY?: boolean };

/**
 * What a running turn is doing, from its events, for the terminal: on a TTY one line rewritten
 * in place (`⠿ 2 agents running, 1 done · 3 skill calls, last tasks.search ok · 4 s`), else one
 * plain line per change. `clear()` erases the line before other output is written.
 */
export class ChatProgress {
  readonly #out: Output;
  readonly #tty: boolean;
  readonly #started = Date.now();
  readonly #agents = new Map<string, 'waiting' | 'running' | 'done' | 'failed'>();
  #skillCalls = 0;
  #lastSkill = '';
  #activity = 'thinking';
  #shown = '';
  #visible = false;
  #timer: NodeJS.Timeout | null = null;
  #quiet = false;
  /** Skill calls that succeeded, for "what was already done" after a cancel. */
  readonly done: string[] = [];

  constructor(out: Output) {
    this.#out = out;
    this.#tty = out.isTTY === true;
    if (this.#tty) this.#timer = setInterval(() => this.#render(), 500);
    this.#render();
  }

  event(event: TurnEvent): void {
    switch (event.type) {
      case 'llm_call':
        this.#activity = event.agentId ? `agent ${event.agentId} thinking` : 'thinking';
        break;
      case 'agent_dispatched':
        this.#agents.set(event.agentId, 'waiting');
        this.#activity = `dispatched agent ${event.agentId}`;
        break;
      case 'agent_start':
        this.#agents.set(event.agentId, 'running');
        this.#activity = `agent ${event.agentId} running`;
        break;
      case 'agent_end':
        this.#agents.set(event.agentId, event.status === 'completed' ? 'done' : 'failed');
        this.#activity = `agent ${event.agentId} ${event.status}`;
        break;
      case 'skill_call_end':
        this.#skillCalls++;
        this.#lastSkill = `${event.skill ?? event.command.split(/\s/)[0]} ${event.status}`;
        if (event.status === 'ok') this.done.push(event.command);
        break;
      case 'tool_call':
        if (event.name === 'get_results') this.#activity = 'waiting for agents';
        break;
      case 'limit':
        this.#activity = `stopped at a limit: ${event.limit}`;
        break;
      case 'turn_end':
        this.#activity = event.status === 'paused' ? 'waiting for your confirmation' : event.status;
        break;
      default:
        return;
    }
    this.#render();
  }

  /** A note in the progress line (e.g. "cancelling"). */
  note(text: string): void {
    this.#activity = text;
    this.#render();
  }

  line(): string {
    const count = (state: string) => [...this.#agents.values()].filter((value) => value === state).length;
    const agents = ['running', 'waiting', 'done', 'failed']
      .map((state) => [state, count(state)] as const)
      .filter(([, n]) => n > 0)
      .map(([state, n]) => `${n} ${state}`);
    const parts = [this.#activity];
    if (agents.length) parts.push(`agents: ${agents.join(', ')}`);
    if (this.#skillCalls)
      parts.push(
        `${this.#skillCalls} skill call${this.#skillCalls === 1 ? '' : 's'}, last ${this.#lastSkill}`,
      );
    parts.push(`${Math.round((Date.now() - this.#started) / 1000)} s`);
    return `… ${parts.join(' · ')}`;
  }

  /** While reply text streams on the same terminal, the line stays away (`quiet(false)` brings it back). */
  quiet(on: boolean): void {
    if (on) this.clear();
    this.#quiet = on;
  }

  #render(): void {
    if (this.#quiet) return;
    const line = this.line();
    if (this.#tty) {
      const width = (this.#out as { columns?: number }).columns ?? 100;
      this.#out.write(`\r\x1b[K${line.slice(0, Math.max(20, width - 1))}`);
      this.#visible = true;
      return;
    }
    // Not a terminal: one line per change, without the ticking seconds.
    const plain = line.replace(/ · \d+ s$/, '');
    if (plain !== this.#shown) this.#out.write(`${plain}\n`);
    this.#shown = plain;
  }

  /** Erases the progress line (TTY) so other output starts on a clean line. */
  clear(): void {
    if (this.#tty && this.#visible) this.#out.write('\r\x1b[K');
    this.#visible = false;
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.clear();
  }
}
