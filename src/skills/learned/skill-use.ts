import type { Queryable } from '../../db/index.ts';
import type { SkillSnapshot } from '../types.ts';

/** How much a skill was used, from the execution log. */
export type SkillUse = { runs: number; failures: number; lastUsed: Date | null };

export type SkillUseQuery = {
  /** Only this user's calls (default: everyone's). */
  userId?: string;
  /** Only these skills (default: every skill called). */
  skills?: readonly string[];
  /** Template skills (no handler): a run also failed when a later call of its turn failed. */
  templates?: readonly string[];
  /**
   * Owned skills by name, with their owner: only the owner's calls count (another user's call
   * of the name was an "unknown skill" error, not a run of this skill).
   */
  owners?: ReadonlyMap<string, string>;
};

// A run of a template skill returns instructions and nearly always succeeds itself; whether
// the procedure worked shows in the calls that followed it in the same turn.
const FAILED = `e.status IN ('error', 'timeout', 'unknown') OR (
  e.skill = ANY($3::text[]) AND e.turn_id IS NOT NULL AND EXISTS (
    SELECT 1 FROM skill_executions later
    WHERE later.turn_id = e.turn_id AND later.kind = 'skill' AND later.started_at > e.started_at
      AND later.status IN ('error', 'timeout', 'unknown')))`;

/**
 * Runs, failures (error, timeout or unknown outcome) and last use of each skill, by name,
 * counted when asked from `skill_executions` — the executor writes nothing extra per call.
 * Skills never called are absent.
 */
export async function skillUse(db: Queryable, query: SkillUseQuery = {}): Promise<Map<string, SkillUse>> {
  const rows = await db.query<{
    skill: string;
    user_id: string;
    runs: number;
    failures: number;
    last_used: Date | null;
  }>(
    `SELECT e.skill, e.user_id, count(*)::int AS runs, count(*) FILTER (WHERE ${FAILED})::int AS failures,
            max(e.started_at) AS last_used
     FROM skill_executions e
     WHERE e.kind = 'skill' AND e.skill IS NOT NULL
       AND ($1::text IS NULL OR e.user_id = $1)
       AND ($2::text[] IS NULL OR e.skill = ANY($2::text[]))
     GROUP BY e.skill, e.user_id`,
    [query.userId ?? null, query.skills ? [...query.skills] : null, [...(query.templates ?? [])]],
  );
  const uses = new Map<string, SkillUse>();
  for (const row of rows) {
    const owner = query.owners?.get(row.skill);
    if (owner !== undefined && owner !== row.user_id) continue;
    const use = uses.get(row.skill) ?? { runs: 0, failures: 0, lastUsed: null };
    const last = row.last_used === null ? null : new Date(row.last_used);
    uses.set(row.skill, {
      runs: use.runs + row.runs,
      failures: use.failures + row.failures,
      lastUsed: last && (!use.lastUsed || last > use.lastUsed) ? last : use.lastUsed,
    });
  }
  return uses;
}

/** Runs and failures of one user's skills, each counted from its own start time. */
export async function skillUseSince(
  db: Queryable,
  userId: string,
  since: ReadonlyMap<string, Date>,
  templates: readonly string[],
): Promise<Map<string, { runs: number; failures: number }>> {
  if (since.size === 0) return new Map();
  const rows = await db.query<{ skill: string; runs: number; failures: number }>(
    `SELECT e.skill, count(*)::int AS runs, count(*) FILTER (WHERE ${FAILED})::int AS failures
     FROM skill_executions e
     JOIN unnest($2::text[], $4::timestamptz[]) AS s(name, since) ON s.name = e.skill
     WHERE e.kind = 'skill' AND e.user_id = $1 AND e.started_at >= s.since
     GROUP BY e.skill`,
    [userId, [...since.keys()], [...templates], [...since.values()]],
  );
  return new Map(rows.map((row) => [row.skill, { runs: row.runs, failures: row.failures }]));
}

/** The skills of `snapshot` that run no code (no handler): templates, whose runs count as above. */
export function templateSkills(snapshot: SkillSnapshot, hasHandler: (handler: string) => boolean): string[] {
  return [...snapshot.skills.values()]
    .filter((skill) => skill.source !== 'mcp' && !hasHandler(skill.handler))
    .map((skill) => skill.name);
}

/** The owner of each owned skill in `snapshot` (learned skills, owned workflows). */
export function skillOwners(snapshot: SkillSnapshot): Map<string, string> {
  return new Map(
    [...snapshot.skills.values()].flatMap((skill) =>
      skill.owner ? [[skill.name, skill.owner] as const] : [],
    ),
  );
}
