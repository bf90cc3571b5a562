import type { Queryable } from '../../db/index.ts';

/*
 * Skills turned off for one user (`disabled_skills`). A skill is on unless listed; the executor
 * refuses a listed one for that user, whoever calls it.
 */

/** The skills turned off for `userId`. */
export async function disabledSkills(db: Queryable, userId: string): Promise<Set<string>> {
  const rows = await db.query<{ skill: string }>('SELECT skill FROM disabled_skills WHERE user_id = $1', [
    userId,
  ]);
  return new Set(rows.map((row) => row.skill));
}

/** Whether `skill` is turned off for `userId`. */
export async function isSkillDisabled(db: Queryable, userId: string, skill: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM disabled_skills WHERE user_id = $1 AND skill = $2', [
    userId,
    skill,
  ]);
  return rows.length > 0;
}

/** Turns a skill on or off for one user; `by` is who did it (`user:<id>`). Returns whether anything changed. */
export async function setSkillEnabled(
  db: Queryable,
  change: { userId: string; skill: string; enabled: boolean; by: string; at: Date },
): Promise<boolean> {
  const rows = change.enabled
    ? await db.query('DELETE FROM disabled_skills WHERE user_id = $1 AND skill = $2 RETURNING skill', [
        change.userId,
        change.skill,
      ])
    : await db.query(
        `INSERT INTO disabled_skills (user_id, skill, disabled_by, disabled_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (user_id, skill) DO NOTHING RETURNING skill`,
        [change.userId, change.skill, change.by, change.at],
      );
  return rows.length > 0;
}
