import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type FSWatcher, watch } from 'chokidar';
import { userIdProblem } from '../users/index.ts';
import { RESERVED_NAMES } from './vault-path.ts';

export type VaultWatcher = { close(): Promise<void> };

/**
 * Watches every user's vault under `<data dir>/files` and calls `changed(userId)` shortly
 * after a file is added, edited or removed there directly (by an editor, a copy, a sync
 * client), at most once per quiet period per user. Steward's own folders are ignored.
 */
export async function watchVaults(
  filesDir: string,
  changed: (userId: string) => void,
  options: { debounceMs?: number; onError?: (error: unknown) => void } = {},
): Promise<VaultWatcher> {
  mkdirSync(filesDir, { recursive: true });
  const timers = new Map<string, NodeJS.Timeout>();
  const ownerOf = (file: string): string | null => {
    const [userId, top] = path.relative(filesDir, file).split(path.sep);
    if (!userId || userId.startsWith('..') || userIdProblem(userId)) return null;
    return top && RESERVED_NAMES.includes(top) ? null : userId;
  };
  const watcher: FSWatcher = watch(filesDir, {
    ignoreInitial: true,
    ignored: (file) => {
      const [, top] = path.relative(filesDir, file).split(path.sep);
      return top !== undefined && RESERVED_NAMES.includes(top);
    },
  });
  watcher.on('all', (_event, file) => {
    const userId = ownerOf(file);
    if (!userId) return;
    clearTimeout(timers.get(userId));
    timers.set(
      userId,
      setTimeout(() => {
        timers.delete(userId);
        changed(userId);
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
