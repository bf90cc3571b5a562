import type { TurnEngine } from './agents/index.ts';
import type { Gateway } from './channels/index.ts';
import type { Logger } from './logging/index.ts';

/**
 * The one recovery sweep of a long-running process: at start and every 30 s, turns that a
 * stopped instance left queued or running are recovered (in order, under their conversation's
 * lock), then stored chat messages whose processing job was lost get one. Both are idempotent,
 * so every instance sweeps; once the engine is shutting down the sweep does nothing. Returns
 * the function that stops it.
 */
export function startRecoverySweep(
  parts: {
    engine: Pick<TurnEngine, 'recoverInterrupted' | 'accepting'>;
    channels: Pick<Gateway, 'sweep'>;
    logger: Logger;
  },
  intervalMs = 30_000,
): () => void {
  const { engine, channels, logger } = parts;
  const sweep = async (first: boolean) => {
    if (!engine.accepting) return;
    await engine
      .recoverInterrupted()
      .catch((error) => logger.error({ err: error }, 'recovering interrupted turns failed'));
    // At start the channels already queued every open message (Gateway.start).
    if (!first && engine.accepting) await channels.sweep();
  };
  void sweep(true);
  const timer = setInterval(() => void sweep(false), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
