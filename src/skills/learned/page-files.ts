import { mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseFrontmatter } from '../registry/parse-frontmatter.ts';
import type { LearnedPageFields } from './learned-page.ts';

/*
 * A learned skill's page on disk: read with its owner, written atomically, moved aside when
 * retired — each change returning how to undo it, so a failed ledger write leaves the files as
 * they were.
 */

export type Disk = { text: string | null; owner: string | null; data: Record<string, unknown> | null };

export function readDisk(file: string): Disk {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { text: null, owner: null, data: null };
    throw error;
  }
  const parsed = parseFrontmatter(text);
  const data = parsed.status === 'ok' ? parsed.data : null;
  return { text, owner: typeof data?.owner === 'string' ? data.owner : null, data };
}

/** Writes `text` to `file` atomically; returns how to put back `previous` (null: no file). */
export function writePage(file: string, text: string, previous: string | null): () => void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  writeFileSync(temporary, text, { mode: 0o600 });
  renameSync(temporary, file);
  return () => {
    if (previous === null) unlinkSync(file);
    else writePage(file, previous, null);
  };
}

/** Moves a retired page out of the loaded tree (kept, never deleted); returns how to move it back. */
export function moveAside(file: string, target: string): () => void {
  mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  renameSync(file, target);
  return () => renameSync(target, file);
}

/** The page fields of a learned skill from its front matter. */
export function fieldsOf(
  name: string,
  description: string,
  data: Record<string, unknown>,
): LearnedPageFields {
  const text = (key: string): string | null => (typeof data[key] === 'string' ? (data[key] as string) : null);
  return {
    name,
    description,
    owner: text('owner') ?? '',
    author: text('author') ?? 'unknown',
    learnedFrom: text('learned_from'),
    learnedAt: text('learned_at') ?? '',
  };
}
