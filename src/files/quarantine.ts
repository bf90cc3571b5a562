import { lstat, mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Queryable } from '../db/index.ts';
import { type JournalEntry, quarantineJournalEntry } from './journal.ts';
import { STAGING_DIR } from './vault-path.ts';

/** `<data dir>/files/.quarantine/`: one JSON record per operation set aside. */
export const QUARANTINE_DIR = '.quarantine';

/**
 * A file operation recovery could neither complete nor roll back, set aside so it stops
 * blocking its user's vault and the server's start. Nothing was deleted: `leftovers` are the
 * files it left in the vault (paths relative to the vault folder `vault`).
 */
export type QuarantineRecord = {
  id: string;
  userId: string;
  /** The vault folder's name in the files root (see `vaultDirName`). */
  vault: string;
  operation: JournalEntry['operation'];
  path: string;
  target: string | null;
  error: string;
  setAsideAt: string;
  leftovers: string[];
};

/**
 * Writes the operation's record, then marks its journal entry `quarantined` (a crash in
 * between leaves it pending, and the next recovery sets it aside again). A record that cannot
 * be written is skipped: the entry is set aside all the same.
 */
export async function quarantineOperation(options: {
  database: Queryable;
  filesDir: string;
  vaultRoot: string;
  entry: JournalEntry;
  error: string;
  now?: () => Date;
}): Promise<QuarantineRecord> {
  const { entry, vaultRoot } = options;
  const leftovers: string[] = [];
  for (const name of [entry.id, `${entry.id}.part`]) {
    const relative = path.join(STAGING_DIR, name);
    if (await lstat(path.join(vaultRoot, relative)).catch(() => null)) leftovers.push(relative);
  }
  const record: QuarantineRecord = {
    id: entry.id,
    userId: entry.userId,
    vault: path.basename(vaultRoot),
    operation: entry.operation,
    path: entry.path,
    target: entry.target,
    error: options.error,
    setAsideAt: (options.now?.() ?? new Date()).toISOString(),
    leftovers,
  };
  try {
    const dir = path.join(options.filesDir, QUARANTINE_DIR);
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, `${recordName(entry.id)}.json`);
    await writeFile(`${file}.tmp`, `${JSON.stringify(record, null, 2)}\n`);
    await rename(`${file}.tmp`, file);
  } catch {
    // A disk that takes no record still must not keep the operation blocking the vault: the
    // journal row below, the log line and the alert still say what happened.
  }
  await quarantineJournalEntry(options.database, entry.id, options.error);
  return record;
}

/** Every operation set aside, oldest first (`steward doctor`); unreadable records are skipped. */
export async function quarantinedOperations(filesDir: string): Promise<QuarantineRecord[]> {
  const dir = path.join(filesDir, QUARANTINE_DIR);
  const names = await readdir(dir).catch(() => [] as string[]);
  const records: QuarantineRecord[] = [];
  for (const name of names.filter((item) => item.endsWith('.json'))) {
    try {
      records.push(JSON.parse(await readFile(path.join(dir, name), 'utf8')) as QuarantineRecord);
    } catch {
      // A record half-written by hand or cut short: the journal row still says quarantined.
    }
  }
  return records.sort((a, b) => a.setAsideAt.localeCompare(b.setAsideAt));
}

// Operation ids are UUIDs; anything else is made safe as a file name.
const recordName = (id: string) => id.replace(/[^A-Za-z0-9_-]/g, '_');
