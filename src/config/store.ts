import { type FSWatcher, watch } from 'node:fs';
import path from 'node:path';
import { errorMessage } from '../errors.ts';
import type { Logger } from '../logging/index.ts';
import { loadConfig, type ResolvedConfig } from './load.ts';
import { recordPendingRestart, settingsNeedingRestart } from './pending-restart.ts';

type Env = Record<string, string | undefined>;

/**
 * Holds the configuration in force. `watch()` re-reads steward.yaml when it changes or first
 * appears: a valid change replaces the config and notifies listeners; an invalid one is logged
 * and ignored. A change to a setting read only at start is logged as needing a restart, and
 * recorded in the data dir while the watching server runs (doctor reads it).
 */
export class ConfigStore {
  #current: ResolvedConfig;
  /** The configuration the process started with: what start-only settings still are. */
  readonly #started: ResolvedConfig;
  #needsRestart: string[] = [];
  #watching = false;
  #listeners = new Set<(config: ResolvedConfig, previous: ResolvedConfig) => void>();
  #guards = new Set<(config: ResolvedConfig, previous: ResolvedConfig) => string | null>();
  #watcher: FSWatcher | null = null;
  #debounce: NodeJS.Timeout | null = null;
  readonly #env: Env;
  readonly #cwd: string;

  constructor(initial: ResolvedConfig, options: { env?: Env; cwd?: string } = {}) {
    this.#current = initial;
    this.#started = initial;
    this.#env = options.env ?? process.env;
    this.#cwd = options.cwd ?? process.cwd();
  }

  get(): ResolvedConfig {
    return this.#current;
  }

  /** Settings changed in the file since start that take effect only after a restart. */
  needsRestart(): readonly string[] {
    return this.#needsRestart;
  }

  onChange(listener: (config: ResolvedConfig, previous: ResolvedConfig) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Adds a rule every reload must pass (e.g. "no open API on a public address"): a change it
   * rejects is refused whole, the configuration in force stays, and the reason is logged.
   */
  addGuard(guard: (config: ResolvedConfig, previous: ResolvedConfig) => string | null): () => void {
    this.#guards.add(guard);
    return () => this.#guards.delete(guard);
  }

  /** Re-reads the file now. Returns the error message when the new file is invalid or refused. */
  reload(logger?: Logger): string | null {
    try {
      const next = loadConfig({ env: this.#env, cwd: this.#cwd });
      const previous = this.#current;
      for (const guard of this.#guards) {
        const refused = guard(next, previous);
        if (refused) {
          logger?.error(`configuration change refused: ${refused}`);
          return refused;
        }
      }
      this.#current = next;
      const needsRestart = settingsNeedingRestart(next, this.#started);
      if (needsRestart.join() !== this.#needsRestart.join() && this.#watching)
        recordPendingRestart(this.#started.dataDir, needsRestart);
      this.#needsRestart = needsRestart;
      if (needsRestart.length > 0) {
        logger?.warn(
          { configPath: next.configPath, needsRestart },
          `configuration changed: ${needsRestart.join(', ')} needs a restart to take effect (every other change took effect)`,
        );
      } else logger?.info({ configPath: next.configPath }, 'configuration reloaded');
      for (const listener of this.#listeners) listener(next, previous);
      return null;
    } catch (error) {
      const message = errorMessage(error);
      logger?.error(`configuration change ignored: ${message}`);
      return message;
    }
  }

  /**
   * Watches the config file's folder (editors replace files rather than write them in place),
   * also when no file existed at start: one created later is read as soon as it appears.
   */
  watch(logger?: Logger): void {
    if (this.#watcher) return;
    const file =
      this.#current.configPath ?? path.resolve(this.#cwd, this.#env.STEWARD_CONFIG ?? 'steward.yaml');
    this.#watching = true;
    // This process runs with the file as it is now: nothing waits on a restart.
    recordPendingRestart(this.#started.dataDir, []);
    this.#watcher = watch(path.dirname(file), (_event, name) => {
      if (name !== path.basename(file)) return;
      if (this.#debounce) clearTimeout(this.#debounce);
      this.#debounce = setTimeout(() => this.reload(logger), 100);
    });
  }

  close(): void {
    if (this.#watching && this.#needsRestart.length > 0) recordPendingRestart(this.#started.dataDir, []);
    this.#watching = false;
    this.#watcher?.close();
    this.#watcher = null;
    if (this.#debounce) clearTimeout(this.#debounce);
  }
}
