import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { FSWatcher } from 'chokidar';
import { SCAN_LIMITS } from './vault-fs.ts';
import { RESERVED_NAMES } from './vault-path.ts';

export type VaultWatcher = { close(): Promise<void> };

/** How many folders deep below a vault the watcher looks (the index walks as deep: SCAN_LIMITS). */
export const WATCH_DEPTH = SCAN_LIMITS.depth;

/**
 * Watches every vault folder in `<data dir>/files` and calls `changed(vault folder name)`
 * shortly after a file is added, edited or removed there directly (by an editor, a copy, a
 * sync client), at most once per quiet period per vault. Steward's own folders are ignored;
 * symbolic links are never followed (a link to `/` would watch the machine) and the depth is
 * bounded, so what a user puts in their vault cannot make the watch unbounded.
 */
export async function watchVaults(
  filesDir: string,
  changed: (vaultDirName: string) => void,
  options: { debounceMs?: number; onError?: (error: unknown) => void } = {},
): Promise<VaultWatcher> {
  const { watch } = await import('chokidar');
  mkdirSync(filesDir, { recursive: true });
  const timers = new Map<string, NodeJS.Timeout>();
  const segments = (file: string) => path.relative(filesDir, file).split(path.sep);
  const vaultOf = (file: string): string | null => {
    const [vault, top] = segments(file);
    if (!vault || vault.startsWith('.')) return null;
    return top && RESERVED_NAMES.includes(top) ? null : vault;
  };
  const watcher: FSWatcher = watch(filesDir, {
    ignoreInitial: true,
    followSymlinks: false,
    // The files root, the vault folder, then WATCH_DEPTH folders inside it.
    depth: WATCH_DEPTH + 1,
    ignored: (file, stats) => {
      // A link is neither followed nor watched itself (chokidar reports links as added at start).
      if (stats?.isSymbolicLink()) return true;
      const [vault, top] = segments(file);
      // Steward's own entries of the files root (`.quarantine`, `.layout`) and of each vault.
      if (vault?.startsWith('.')) return true;
      return top !== undefined && RESERVED_NAMES.includes(top);
    },
  });
  watcher.on('all', (_event, file) => {
    const vault = vaultOf(file);
    if (!vault) return;
    clearTimeout(timers.get(vault));
    timers.set(
      vault,
      setTimeout(() => {
        timers.delete(vault);
        changed(vault);
      }, options.debounceMs ?? 1_000),
    );
  });
  watcher.on('error', (error) => options.onError?.(error));
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return {
    close: async () => {
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      await watcher.close();
    },
  };
}
