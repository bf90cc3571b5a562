import { createReadStream } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import type { Database } from '../db/index.ts';
import { userVaultDir, withVaultLock } from '../files/index.ts';
import { ArchiveWriter } from './archive-writer.ts';
import { type DatabaseDump, type DumpedTable, dumpDatabase } from './dump-database.ts';
import {
  type BackupManifest,
  DB_PREFIX,
  FILES_PREFIX,
  FORMAT_VERSION,
  MANIFEST_ENTRY,
  MANIFEST_FORMAT,
  NOT_INCLUDED,
  SKILLS_PREFIX,
} from './manifest.ts';

export type BackupSources = {
  database: Database;
  /** `<data dir>`: the vault is `<data dir>/files`; work files go under `<data dir>/backups`. */
  dataDir: string;
  /** The user skills dir (workflows, owned and imported skills). */
  skillsDir: string;
  stewardVersion: string;
  now?: () => Date;
};

export type BackupSummary = {
  manifest: BackupManifest;
  files: number;
  skills: number;
  /** Symbolic links and other non-files left out, as archive paths. */
  skipped: string[];
  bytes: number;
};

export const filesRoot = (dataDir: string): string => path.join(dataDir, 'files');
export const backupsDir = (dataDir: string): string => path.join(dataDir, 'backups');

/**
 * Writes one archive of everything Steward needs to come back to `output`: manifest.json, every
 * table (db/<table>.jsonl, from one database snapshot), the vault (files/, every version; each
 * user's folder read while no file operation of theirs runs), the user skills dir (skills/) and
 * SHA256SUMS. Works while the server runs; never follows a symbolic link.
 */
export async function writeBackup(sources: BackupSources, output: Writable): Promise<BackupSummary> {
  const now = sources.now ?? (() => new Date());
  await mkdir(backupsDir(sources.dataDir), { recursive: true, mode: 0o700 });
  const work = await mkdtemp(path.join(backupsDir(sources.dataDir), '.work-'));
  const writer = new ArchiveWriter(output);
  try {
    const dump = await dumpDatabase(sources.database, path.join(work, 'db'));
    const manifest = await manifestOf(dump, sources.stewardVersion, now());
    await writer.addBuffer(MANIFEST_ENTRY, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
    for (const table of dump.tables) await writer.addFile(`${DB_PREFIX}${table.name}.jsonl`, table.file);
    const skipped: string[] = [];
    const root = filesRoot(sources.dataDir);
    const added = new Set<string>();
    // Each user's folder under their vault lock (a write is never half in the copy), then the rest.
    const users = await columnValues(
      dump.tables.find((table) => table.name === 'users'),
      'id',
    );
    for (const userId of users.sort()) {
      const dir = userVaultDir(root, userId);
      if (!(await isDirectory(dir))) continue;
      await withVaultLock(sources.database, root, userId, () =>
        addTree(writer, dir, `${FILES_PREFIX}${toEntryPath(path.relative(root, dir))}/`, added, skipped),
      );
    }
    await addTree(writer, root, FILES_PREFIX, added, skipped);
    const files = added.size;
    await addTree(writer, sources.skillsDir, SKILLS_PREFIX, added, skipped);
    await writer.finish();
    return { manifest, files, skills: added.size - files, skipped, bytes: writer.bytes };
  } catch (error) {
    writer.abort(error as Error);
    throw error;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function manifestOf(dump: DatabaseDump, stewardVersion: string, at: Date): Promise<BackupManifest> {
  const keyIds = await columnValues(
    dump.tables.find((table) => table.name === 'integration_accounts'),
    'key_id',
  );
  return {
    format: MANIFEST_FORMAT,
    format_version: FORMAT_VERSION,
    steward_version: stewardVersion,
    created_at: at.toISOString(),
    database: {
      backend: dump.backend,
      vector: dump.vector,
      migrations: dump.migrations,
      tables: dump.tables.map((table) => ({
        name: table.name,
        entry: `${DB_PREFIX}${table.name}.jsonl`,
        columns: table.columns,
        rows: table.rows,
        sha256: table.sha256,
      })),
      sequences: dump.sequences.map((sequence) => ({ name: sequence.name, last_value: sequence.lastValue })),
    },
    credentials: {
      encrypted: true,
      secret_key_included: false,
      key_ids: [...new Set(keyIds)].sort(),
      note: 'Connected accounts are stored encrypted. The secret key is NOT in this archive: keep STEWARD_SECRET_KEY or <data dir>/secret.key safe separately; without it, restored accounts must be connected again.',
    },
    not_included: NOT_INCLUDED,
  };
}

/** The distinct non-null values of one column of a dumped table. */
async function columnValues(table: DumpedTable | undefined, column: string): Promise<string[]> {
  const index = table?.columns.findIndex((item) => item.name === column) ?? -1;
  if (!table || index < 0) return [];
  const values = new Set<string>();
  for await (const line of createInterface({
    input: createReadStream(table.file, 'utf8'),
    crlfDelay: Infinity,
  })) {
    if (line === '') continue;
    const value = (JSON.parse(line) as Array<string | null>)[index];
    if (value !== null && value !== undefined) values.add(value);
  }
  return [...values];
}

async function isDirectory(dir: string): Promise<boolean> {
  return (await lstat(dir).catch(() => null))?.isDirectory() === true;
}

const toEntryPath = (relative: string) => relative.split(path.sep).join('/');

/** Adds every regular file below `dir` as `<prefix><relative path>`, skipping names in `added`. */
async function addTree(
  writer: ArchiveWriter,
  dir: string,
  prefix: string,
  added: Set<string>,
  skipped: string[],
): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const absolute = path.join(dir, entry.name);
    const name = `${prefix}${entry.name}`;
    if (entry.isDirectory()) await addTree(writer, absolute, `${name}/`, added, skipped);
    else if (entry.isFile()) {
      if (added.has(name)) continue;
      try {
        await writer.addFile(name, absolute);
      } catch (error) {
        // Gone since it was listed (deleted or moved into the archive of versions): not in this backup.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      added.add(name);
    } else skipped.push(name);
  }
}
