import { readFile, stat } from 'node:fs/promises';
import type { Queryable } from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import { type ExtractedText, extractText, nameWords } from './extract-text.ts';
import { type ScanLimits, sha256, type VaultFs } from './vault-fs.ts';

/** user_id of rows every user may search (the skill pages). */
export const SHARED_OWNER = '';

// to_tsvector refuses documents past 1 MB of lexemes; bodies are cut well before that.
const MAX_BODY_CHARS = 400_000;

export type IndexReport = {
  indexed: number;
  removed: number;
  unchanged: number;
  failed: number;
  /** Set when the vault walk hit its bounds: files past them are not indexed, and no row is dropped. */
  limited?: string;
};

type IndexedRow = { path: string; change_token: string };

/**
 * Brings one user's index rows in line with the vault: files whose size or modification
 * time changed are extracted again, rows of files that are gone are dropped (the index is
 * derived data; the files themselves are never touched).
 */
export async function indexVault(
  db: Queryable,
  userId: string,
  fs: VaultFs,
  options: { maxBytes: number; signal?: AbortSignal; limits?: Partial<ScanLimits> },
): Promise<IndexReport> {
  const report: IndexReport = { indexed: 0, removed: 0, unchanged: 0, failed: 0 };
  const scan = await fs.filesBelow('', {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
  });
  const files = scan.files;
  if (scan.limited) report.limited = scan.limited;
  const rows = await db.query<IndexedRow>(
    `SELECT path, change_token FROM content_index WHERE user_id = $1 AND source = 'vault'`,
    [userId],
  );
  const known = new Map(rows.map((row) => [row.path, row]));
  for (const file of files) {
    options.signal?.throwIfAborted();
    const row = known.get(file.path);
    known.delete(file.path);
    // Every write lands as a new file (renamed into place), so the inode alone tells a rewrite.
    const info = await stat(fs.abs(file.path), { bigint: true }).catch(() => null);
    if (!info) continue;
    const changeToken = `${info.ino}:${info.mtimeNs}:${info.size}`;
    if (row?.change_token === changeToken) {
      report.unchanged++;
      continue;
    }
    let text: ExtractedText;
    let note: string | null = null;
    let hash = '';
    if (file.size > options.maxBytes) {
      text = { kind: 'binary', title: nameWords(file.path), headings: '', body: '', readable: '' };
      note = `too large to index (${file.size} bytes; files.max_index_bytes is ${options.maxBytes})`;
    } else {
      const content = await readFile(fs.abs(file.path));
      hash = sha256(content);
      try {
        text = await extractText(file.path, content);
      } catch (error) {
        text = { kind: 'binary', title: nameWords(file.path), headings: '', body: '', readable: '' };
        note = `unreadable: ${errorMessage(error)}`;
        report.failed++;
      }
    }
    // Folder names count as title words too: "reports/2026/q1.md" is found by "reports".
    const folders = file.path.split('/').slice(0, -1).join(' ');
    await upsertRow(db, {
      userId,
      source: 'vault',
      path: file.path,
      text: { ...text, title: `${text.title} ${folders}`.trim() },
      size: file.size,
      changeToken,
      hash,
      note,
    });
    report.indexed++;
  }
  // A partial walk cannot tell a file that is gone from one it did not reach.
  if (known.size > 0 && !scan.limited) {
    await db.query(
      `DELETE FROM content_index WHERE user_id = $1 AND source = 'vault' AND path = ANY($2::text[])`,
      [userId, [...known.keys()]],
    );
    report.removed = known.size;
  }
  return report;
}

/** A skill page as the index sees it. */
export type SkillPage = { name: string; description: string; body: string };

/** Indexes the skill pages (shared by every user); pages that are gone leave the index. */
export async function indexSkillPages(db: Queryable, pages: SkillPage[]): Promise<IndexReport> {
  const report: IndexReport = { indexed: 0, removed: 0, unchanged: 0, failed: 0 };
  const rows = await db.query<{ path: string; content_hash: string }>(
    `SELECT path, content_hash FROM content_index WHERE user_id = $1 AND source = 'skill'`,
    [SHARED_OWNER],
  );
  const known = new Map(rows.map((row) => [row.path, row.content_hash]));
  for (const page of pages) {
    const hash = sha256(`${page.description}\n${page.body}`);
    const previous = known.get(page.name);
    known.delete(page.name);
    if (previous === hash) {
      report.unchanged++;
      continue;
    }
    const headings = [...page.body.matchAll(/^#{1,6}\s+(.*)$/gm)].map((match) => match[1]!);
    const body = page.body.replace(/^#{1,6}\s+.*$/gm, '');
    await upsertRow(db, {
      userId: SHARED_OWNER,
      source: 'skill',
      path: page.name,
      text: {
        kind: 'markdown',
        title: `${page.name} ${page.description}`,
        headings: headings.join('\n'),
        body,
        readable: page.body,
      },
      size: Buffer.byteLength(page.body),
      changeToken: hash,
      hash,
      note: null,
    });
    report.indexed++;
  }
  if (known.size > 0) {
    await db.query(
      `DELETE FROM content_index WHERE user_id = $1 AND source = 'skill' AND path = ANY($2::text[])`,
      [SHARED_OWNER, [...known.keys()]],
    );
    report.removed = known.size;
  }
  return report;
}

async function upsertRow(
  db: Queryable,
  row: {
    userId: string;
    source: 'vault' | 'skill';
    path: string;
    text: ExtractedText;
    size: number;
    changeToken: string;
    hash: string;
    note: string | null;
  },
): Promise<void> {
  let body = row.text.body;
  let note = row.note;
  if (body.length > MAX_BODY_CHARS) {
    body = body.slice(0, MAX_BODY_CHARS);
    note = `only the first ${MAX_BODY_CHARS} characters are indexed`;
  }
  await db.query(
    `INSERT INTO content_index (user_id, source, path, kind, title, headings, body, size, change_token, content_hash, note)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (user_id, source, path) DO UPDATE SET
       kind = EXCLUDED.kind, title = EXCLUDED.title, headings = EXCLUDED.headings, body = EXCLUDED.body,
       size = EXCLUDED.size, change_token = EXCLUDED.change_token, content_hash = EXCLUDED.content_hash,
       note = EXCLUDED.note, indexed_at = now()`,
    [
      row.userId,
      row.source,
      row.path,
      row.text.kind,
      row.text.title.slice(0, 2000),
      row.text.headings.slice(0, 20_000),
      body.replaceAll('\0', ''),
      row.size,
      row.changeToken,
      row.hash,
      note,
    ],
  );
}
