import type { Queryable } from '../../db/index.ts';
import { storableText } from '../executions.ts';

/*
 * `skill_versions` (owned by this folder): every version of every learned skill, per owner and
 * name, numbered from 1. Rows are only ever added.
 */

export type SkillChange = 'write' | 'update' | 'retire' | 'rollback' | 'outside_edit';

export type SkillVersion = {
  owner: string;
  name: string;
  version: number;
  change: SkillChange;
  author: string;
  reason: string;
  /** The whole page as of this version. */
  content: string;
  /** From the previous version's page; empty for the first and for a retirement. */
  diff: string;
  turnId: string | null;
  at: Date;
};

/** A SkillVersion as stored: the owner, turn and time under their column names. */
type Row = Omit<SkillVersion, 'owner' | 'turnId' | 'at'> & {
  user_id: string;
  turn_id: string | null;
  created_at: Date;
};

const COLUMNS = 'user_id, name, version, change, author, reason, content, diff, turn_id, created_at';

function fromRow(row: Row): SkillVersion {
  return {
    owner: row.user_id,
    name: row.name,
    version: row.version,
    change: row.change,
    author: row.author,
    reason: row.reason,
    content: row.content,
    diff: row.diff,
    turnId: row.turn_id,
    at: new Date(row.created_at),
  };
}

/**
 * Serializes changes to one skill name (every owner: the file path is shared) until the
 * transaction ends, across processes on one database.
 */
export async function lockSkillName(tx: Queryable, name: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`skill-ledger:${name}`]);
}

/** Adds the next version of `owner`'s `name` and returns it. Call under `lockSkillName`. */
export async function appendVersion(
  tx: Queryable,
  entry: Omit<SkillVersion, 'version'>,
): Promise<SkillVersion> {
  const rows = await tx.query<Row>(
    `INSERT INTO skill_versions (${COLUMNS})
     SELECT $1, $2, COALESCE(max(version), 0) + 1, $3, $4, $5, $6, $7, $8, $9
     FROM skill_versions WHERE user_id = $1 AND name = $2
     RETURNING ${COLUMNS}`,
    [
      entry.owner,
      entry.name,
      entry.change,
      storableText(entry.author),
      storableText(entry.reason),
      storableText(entry.content),
      storableText(entry.diff),
      entry.turnId,
      entry.at,
    ],
  );
  return fromRow(rows[0]!);
}

/** Every version of `owner`'s `name`, oldest first. */
export async function versionsOf(db: Queryable, owner: string, name: string): Promise<SkillVersion[]> {
  const rows = await db.query<Row>(
    `SELECT ${COLUMNS} FROM skill_versions WHERE user_id = $1 AND name = $2 ORDER BY version`,
    [owner, name],
  );
  return rows.map(fromRow);
}

/** The newest version of `owner`'s `name`, or null when it has no history. */
export async function latestVersion(
  db: Queryable,
  owner: string,
  name: string,
): Promise<SkillVersion | null> {
  const rows = await db.query<Row>(
    `SELECT ${COLUMNS} FROM skill_versions WHERE user_id = $1 AND name = $2 ORDER BY version DESC LIMIT 1`,
    [owner, name],
  );
  return rows[0] ? fromRow(rows[0]) : null;
}

/** The newest version of every learned skill (of one owner, or of everyone), by owner and name. */
export async function latestVersions(db: Queryable, owner?: string): Promise<SkillVersion[]> {
  const rows = await db.query<Row>(
    `SELECT DISTINCT ON (user_id, name) ${COLUMNS} FROM skill_versions
     WHERE $1::text IS NULL OR user_id = $1
     ORDER BY user_id, name, version DESC`,
    [owner ?? null],
  );
  return rows.map(fromRow);
}

/** Who has a history for `name`, sorted. */
export async function ownersOf(db: Queryable, name: string): Promise<string[]> {
  const rows = await db.query<{ user_id: string }>(
    'SELECT DISTINCT user_id FROM skill_versions WHERE name = $1 ORDER BY user_id',
    [name],
  );
  return rows.map((row) => row.user_id);
}
