import type { Database } from '../../db/index.ts';

export type DecayOptions = {
  now: Date;
  /** Days for an unused memory's importance to halve (default 30). */
  halfLifeDays?: number;
  /** Archive memories whose importance fell below this (default 0.1)… */
  archiveBelow?: number;
  /** …and that were neither created nor used in this many days (default 90). */
  minAgeDays?: number;
  /** Only this user's memories (default: everyone's; the daily job runs for all). */
  userId?: string;
};

export type DecayResult = { decayed: number; archived: number };

const DAY_SECONDS = 86_400;

/**
 * The lifecycle job. Importance halves every `halfLifeDays` a memory goes unused:
 * importance × 0.5^(days / halfLife), where the days run from the later of its last access
 * and the previous decay (`decayed_at`). Decaying each run only the time since the previous
 * one composes exactly (0.5^a × 0.5^b = 0.5^(a+b)), however often the job runs, and a use
 * stops the clock without restoring what was lost. Memories that fall below `archiveBelow`
 * and are older than `minAgeDays` are archived — never deleted.
 */
export async function decayAndArchive(db: Database, options: DecayOptions): Promise<DecayResult> {
  const halfLifeDays = options.halfLifeDays ?? 30;
  if (!(halfLifeDays > 0)) throw new RangeError('halfLifeDays must be positive');
  const archiveBelow = options.archiveBelow ?? 0.1;
  const minAgeDays = options.minAgeDays ?? 90;
  const forUser = (index: number) => (options.userId === undefined ? '' : `AND m.user_id = $${index}`);
  const userParam = options.userId === undefined ? [] : [options.userId];

  return db.transaction(async (tx) => {
    const since = 'GREATEST(m.accessed_at, COALESCE(m.decayed_at, m.accessed_at))';
    const decayed = await tx.query<{ count: number }>(
      `WITH changed AS (
         UPDATE memory_entries m SET
           importance = (m.importance * power(0.5,
             extract(epoch FROM ($1::timestamptz - ${since})) / ${DAY_SECONDS} / $2::float8))::real,
           decayed_at = $1
         WHERE m.archived_at IS NULL AND ${since} < $1 ${forUser(3)}
         RETURNING 1
       )
       SELECT count(*)::int AS count FROM changed`,
      [options.now, halfLifeDays, ...userParam],
    );
    const archived = await tx.query<{ count: number }>(
      `WITH changed AS (
         UPDATE memory_entries m SET archived_at = $1
         WHERE m.archived_at IS NULL AND m.importance < $3::real
           AND m.created_at < $1::timestamptz - make_interval(days => $2::int)
           AND m.accessed_at < $1::timestamptz - make_interval(days => $2::int)
           ${forUser(4)}
         RETURNING 1
       )
       SELECT count(*)::int AS count FROM changed`,
      [options.now, Math.trunc(minAgeDays), archiveBelow, ...userParam],
    );
    return { decayed: Number(decayed[0]?.count ?? 0), archived: Number(archived[0]?.count ?? 0) };
  });
}
