import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { FSWatcher } from 'chokidar';
import { type Logger, silentLogger } from '../../logging/index.ts';
import type { Diagnostic, SkillProvider, SkillSnapshot } from '../types.ts';
import { loadSkillRoots, type SkillRoot } from './load-skill-roots.ts';
import { mergeProvided } from './merge-provided.ts';

export type SkillRegistryOptions = {
  roots: SkillRoot[];
  logger?: Logger;
  /** Quiet time gathered before a reload, so one save's burst of events reloads once. */
  debounceMs?: number;
  /**
   * Look for changes every this many ms instead of waiting for the filesystem's events (a skills
   * dir on a network volume shared by instances on several hosts, where events do not arrive).
   */
  pollMs?: number;
};

export type SkillChangeListener = (current: SkillSnapshot, previous: SkillSnapshot | null) => void;

/**
 * Holds the current skill snapshot and swaps it whole on reload, so a reader holding an old
 * snapshot keeps a consistent view. `watch()` reloads every root shortly after any change.
 */
export class SkillRegistry {
  readonly #roots: SkillRoot[];
  readonly #logger: Logger;
  readonly #debounceMs: number;
  readonly #pollMs: number;
  readonly #listeners = new Set<SkillChangeListener>();
  readonly #providers = new Set<SkillProvider>();
  #files: SkillSnapshot | null = null;
  #current: SkillSnapshot | null = null;
  #version = 0;
  #watcher: FSWatcher | null = null;
  #poller: NodeJS.Timeout | null = null;
  #timer: NodeJS.Timeout | null = null;

  constructor(options: SkillRegistryOptions) {
    this.#roots = options.roots.map((root) => ({ ...root, dir: path.resolve(root.dir) }));
    this.#logger = options.logger ?? silentLogger();
    this.#debounceMs = options.debounceMs ?? 100;
    this.#pollMs = options.pollMs ?? 0;
  }

  /** (Re)loads every root and swaps the snapshot in. Invalid files keep their last valid version. */
  load(): SkillSnapshot {
    this.#files = loadSkillRoots(this.#roots, { logger: this.#logger, previous: this.#files ?? undefined });
    return this.#publish();
  }

  /** Re-merges what the providers contribute without re-reading skill files. */
  refresh(): SkillSnapshot {
    return this.#files ? this.#publish() : this.load();
  }

  /** Adds skills from outside the roots (MCP servers) to every snapshot from now on. */
  addProvider(provider: SkillProvider): () => void {
    this.#providers.add(provider);
    return () => this.#providers.delete(provider);
  }

  #publish(): SkillSnapshot {
    const previous = this.#current;
    const files = this.#files!;
    this.#version = Math.max(this.#version + 1, files.version);
    const provided = [...this.#providers].map((provider) => provider.provide());
    const next = mergeProvided(files, provided, this.#version);
    this.#logNewDiagnostics(previous?.diagnostics ?? [], next.diagnostics);
    this.#current = next;
    this.#logger.debug({ version: next.version, skills: next.skills.size }, 'skills loaded');
    for (const listener of this.#listeners) {
      try {
        listener(next, previous);
      } catch (error) {
        this.#logger.error({ err: error }, 'skill change listener failed');
      }
    }
    return next;
  }

  /** The current snapshot; loads on first use. */
  snapshot(): SkillSnapshot {
    return this.#current ?? this.load();
  }

  /** Starts watching every root (creating missing user roots); resolves once the watcher is ready. */
  async watch(): Promise<void> {
    // chokidar is loaded here: a process that never watches (steward run) does not pay for it.
    const { watch } = await import('chokidar');
    if (this.#watcher || this.#poller) return;
    // 0700: a user skills dir usually sits in the private data dir, which this may create.
    for (const root of this.#roots)
      if (root.source === 'user') mkdirSync(root.dir, { recursive: true, mode: 0o700 });
    if (!this.#current) this.load();
    if (this.#pollMs > 0) {
      this.#startPolling();
      return;
    }
    const dirs = this.#roots.filter((root) => existsSync(root.dir)).map((root) => root.dir);
    const watcher = watch(dirs, {
      ignoreInitial: true,
      depth: 5,
      ignored: (file, stats) => Boolean(stats?.isFile()) && !file.endsWith('.md'),
    });
    this.#watcher = watcher;
    watcher.on('all', () => this.#scheduleReload());
    watcher.on('error', (error) => this.#logger.warn({ err: error }, 'skill watcher error'));
    await new Promise<void>((resolve) => watcher.once('ready', resolve));
  }

  /**
   * Polling (a network volume): every pollMs, the list of skill files with their sizes and
   * modification times; any difference reloads. Stat calls only, so a large folder costs little.
   */
  #startPolling(): void {
    const dirs = this.#roots.map((root) => root.dir);
    let seen = skillFilesFingerprint(dirs);
    this.#poller = setInterval(() => {
      const now = skillFilesFingerprint(dirs);
      if (now === seen) return;
      seen = now;
      this.#scheduleReload();
    }, this.#pollMs);
    this.#poller.unref();
  }

  /** Calls `listener` after every reload. Returns a function that unsubscribes it. */
  onChange(listener: SkillChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#poller) clearInterval(this.#poller);
    this.#poller = null;
    const watcher = this.#watcher;
    this.#watcher = null;
    await watcher?.close();
  }

  // The first event starts the clock; later ones ride along, so a change is live within
  // debounceMs plus one load however busy the folder is.
  #scheduleReload(): void {
    if (this.#timer || !(this.#watcher || this.#poller)) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      if (!(this.#watcher || this.#poller)) return;
      try {
        this.load();
      } catch (error) {
        this.#logger.error({ err: error }, 'skill reload failed');
      }
    }, this.#debounceMs);
  }

  #logNewDiagnostics(before: readonly Diagnostic[], after: readonly Diagnostic[]): void {
    const key = (diagnostic: Diagnostic) =>
      `${diagnostic.severity}\u0000${diagnostic.path}\u0000${diagnostic.message}`;
    const known = new Set(before.map(key));
    for (const diagnostic of after) {
      if (known.has(key(diagnostic))) continue;
      const fields = { path: diagnostic.path, problem: diagnostic.message };
      if (diagnostic.severity === 'error')
        this.#logger.warn(fields, `invalid skill file: ${diagnostic.message}`);
      else this.#logger.info(fields, `skill file warning: ${diagnostic.message}`);
    }
  }
}

/** Every skill file (.md) under `dirs` with its size and modification time, as one string. */
function skillFilesFingerprint(dirs: readonly string[]): string {
  const files: string[] = [];
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.md')) continue;
      const file = path.join(entry.parentPath, entry.name);
      try {
        const stats = statSync(file);
        files.push(`${file}\u0000${stats.size}\u0000${stats.mtimeMs}`);
      } catch {
        // Removed between the listing and the stat: the next poll sees it gone.
      }
    }
  }
  return files.sort().join('\n');
}
