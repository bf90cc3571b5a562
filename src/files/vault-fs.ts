import { createHash } from 'node:crypto';
import { lstat, mkdir, open, readdir, realpath, rename, stat } from 'node:fs/promises';
import path from 'node:path';
import { StewardError } from '../errors.ts';
import { done, type FileEntry, type FileOutcome, type FileVersion, failure } from './file-store.ts';
import {
  ARCHIVE_DIR,
  archiveSegments,
  normalizeUserPath,
  RESERVED_NAMES,
  versionFromFileName,
} from './vault-path.ts';

/** Bounds of a walk through a vault (the index, Drive sync). */
export type ScanLimits = { files: number; depth: number };
export const SCAN_LIMITS: ScanLimits = { files: 50_000, depth: 32 };

/** The files a walk found; `limited` says which bound stopped it early (the list is then partial). */
export type VaultScan = { files: FileEntry[]; limited: string | null };

/**
 * The file-system side of a local vault: where a user path lives on disk, what is there,
 * and the few primitive moves operations are built from. Knows nothing about the journal.
 */
export class VaultFs {
  readonly root: string;
  #realRoot: string | null = null;

  constructor(root: string) {
    this.root = root;
  }

  /** The root with symbolic links resolved, once `ensureRoot` has run (null before). */
  get realRoot(): string | null {
    return this.#realRoot;
  }

  abs(userPath: string): string {
    return userPath === '' ? this.root : path.join(this.root, ...userPath.split('/'));
  }

  /** The folder holding the archived versions of a path (see `archiveSegments`). */
  archiveDir(userPath: string): string {
    return path.join(this.root, ARCHIVE_DIR, ...archiveSegments(userPath));
  }

  async ensureRoot(): Promise<string> {
    if (this.#realRoot) return this.#realRoot;
    await mkdir(this.root, { recursive: true });
    this.#realRoot = await realpath(this.root);
    return this.#realRoot;
  }

  /**
   * Normalizes `input` and checks that it resolves inside the root once symlinks are
   * followed (the deepest part of the path that exists is resolved).
   */
  async resolve(input: string, options: { allowRoot?: boolean } = {}): Promise<FileOutcome<string>> {
    const checked = normalizeUserPath(input, options);
    if (!checked.ok) return failure('invalid_path', checked.message);
    const realRoot = await this.ensureRoot();
    let probe = this.abs(checked.path);
    for (;;) {
      const resolved = await realpath(probe).catch(() => null);
      if (resolved !== null) {
        if (resolved !== realRoot && !resolved.startsWith(realRoot + path.sep))
          return failure(
            'invalid_path',
            `"${checked.path}" leads outside your files through a symbolic link; only paths inside your files' root can be used`,
          );
        return done(checked.path);
      }
      if ((await lstat(probe).catch(() => null))?.isSymbolicLink())
        return failure(
          'invalid_path',
          `"${checked.path}" goes through a symbolic link that leads nowhere inside your files`,
        );
      const parent = path.dirname(probe);
      if (parent === probe) return done(checked.path);
      probe = parent;
    }
  }

  /** What is at a user path: a file, a folder, or nothing (a dangling link counts as nothing). */
  async kindOf(userPath: string): Promise<'file' | 'folder' | null> {
    const info = await stat(this.abs(userPath)).catch(() => null);
    if (!info) return null;
    return info.isDirectory() ? 'folder' : info.isFile() ? 'file' : null;
  }

  async entry(userPath: string): Promise<FileEntry | null> {
    const info = await stat(this.abs(userPath)).catch(() => null);
    if (!info || !(info.isFile() || info.isDirectory())) return null;
    return {
      path: userPath,
      kind: info.isDirectory() ? 'folder' : 'file',
      size: info.isDirectory() ? 0 : info.size,
      modifiedAt: info.mtime,
    };
  }

  /** Entries directly inside a folder, without Steward's own folders or links leading out. */
  async children(dir: string): Promise<FileEntry[]> {
    const realRoot = await this.ensureRoot();
    const names = await readdir(this.abs(dir)).catch(() => [] as string[]);
    const entries: FileEntry[] = [];
    for (const name of names) {
      if (dir === '' && RESERVED_NAMES.includes(name)) continue;
      const userPath = dir === '' ? name : `${dir}/${name}`;
      const info = await lstat(this.abs(userPath)).catch(() => null);
      if (info?.isSymbolicLink()) {
        const target = await realpath(this.abs(userPath)).catch(() => null);
        if (!target?.startsWith(realRoot + path.sep)) continue;
      }
      const entry = await this.entry(userPath);
      if (entry) entries.push(entry);
    }
    return entries.sort((a, b) =>
      a.kind === b.kind ? a.path.localeCompare(b.path) : a.kind === 'folder' ? -1 : 1,
    );
  }

  /**
   * Every file below a folder, skipping Steward's own folders. Symbolic links are never
   * followed (a link `up -> ..` would make the tree endless, one to `/` would make it the
   * machine), and the walk stops at `limits`: `limited` then says which bound was hit, and the
   * files list is incomplete.
   */
  async filesBelow(
    dir: string,
    options: { signal?: AbortSignal; limits?: Partial<ScanLimits> } = {},
  ): Promise<VaultScan> {
    const limits = { ...SCAN_LIMITS, ...options.limits };
    const files: FileEntry[] = [];
    const pending: Array<{ dir: string; depth: number }> = [{ dir, depth: 0 }];
    let limited: string | null = null;
    while (pending.length > 0) {
      options.signal?.throwIfAborted();
      const folder = pending.pop()!;
      const dirents = await readdir(this.abs(folder.dir), { withFileTypes: true }).catch(() => []);
      for (const dirent of dirents) {
        if (folder.dir === '' && RESERVED_NAMES.includes(dirent.name)) continue;
        const userPath = folder.dir === '' ? dirent.name : `${folder.dir}/${dirent.name}`;
        if (dirent.isDirectory()) {
          if (folder.depth < limits.depth) pending.push({ dir: userPath, depth: folder.depth + 1 });
          else limited ??= `folders nested deeper than ${limits.depth} levels were not scanned`;
          continue;
        }
        if (!dirent.isFile()) continue;
        if (files.length >= limits.files) {
          limited = `only the first ${limits.files} files were scanned`;
          return { files, limited };
        }
        const info = await lstat(this.abs(userPath)).catch(() => null);
        if (info?.isFile())
          files.push({ path: userPath, kind: 'file', size: info.size, modifiedAt: info.mtime });
      }
    }
    return { files, limited };
  }

  /** Archived versions of a path: numbers and their files, oldest first. */
  async archived(userPath: string): Promise<Array<{ version: number; file: string }>> {
    const dir = this.archiveDir(userPath);
    const names = await readdir(dir, { withFileTypes: true }).catch(() => []);
    return names
      .filter((dirent) => dirent.isFile())
      .map((dirent) => ({ version: versionFromFileName(dirent.name), file: path.join(dir, dirent.name) }))
      .filter((item): item is { version: number; file: string } => item.version !== null)
      .sort((a, b) => a.version - b.version);
  }

  async versions(userPath: string): Promise<FileVersion[]> {
    const archived = await this.archived(userPath);
    const versions: FileVersion[] = [];
    for (const item of archived) {
      const info = await stat(item.file);
      versions.push({ version: item.version, size: info.size, savedAt: info.mtime, current: false });
    }
    const current = await stat(this.abs(userPath)).catch(() => null);
    if (current?.isFile()) {
      const last = archived.at(-1)?.version ?? 0;
      versions.push({ version: last + 1, size: current.size, savedAt: current.mtime, current: true });
    }
    return versions;
  }

  /** The number the current content of a path gets when it is archived. */
  async nextArchiveVersion(userPath: string): Promise<number> {
    return ((await this.archived(userPath)).at(-1)?.version ?? 0) + 1;
  }

  async exists(absolute: string): Promise<boolean> {
    return (await lstat(absolute).catch(() => null)) !== null;
  }

  /** Writes `content` to `file` and flushes it to disk. */
  async writeDurably(file: string, content: Buffer): Promise<void> {
    await mkdir(path.dirname(file), { recursive: true });
    const handle = await open(file, 'w');
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  /** Renames inside the vault, creating the destination's folders. Never replaces anything. */
  async moveInside(from: string, to: string): Promise<void> {
    if (await this.exists(to))
      throw new StewardError('vault_conflict', `refusing to rename ${from} over ${to}, which exists`);
    await mkdir(path.dirname(to), { recursive: true });
    await rename(from, to);
  }
}

export function sha256(content: Buffer | string): string {
  return createHash('sha256').update(content).digest('hex');
}
