import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { ArchiveWriter } from './archive-writer.ts';

/** Writes every regular file below `dir` to `output` as a checked archive (an export sent over HTTP). */
export async function packFolder(dir: string, output: Writable): Promise<void> {
  const writer = new ArchiveWriter(output);
  try {
    const entries = await readdir(dir, { withFileTypes: true, recursive: true });
    for (const entry of entries.sort((a, b) => (a.parentPath + a.name < b.parentPath + b.name ? -1 : 1))) {
      if (!entry.isFile()) continue;
      const absolute = path.join(entry.parentPath, entry.name);
      await writer.addFile(path.relative(dir, absolute).split(path.sep).join('/'), absolute);
    }
    await writer.finish();
  } catch (error) {
    writer.abort(error as Error);
    throw error;
  }
}
