import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BUILTIN_SKILLS_DIR, type ResolvedConfig } from '../config/index.ts';
import type { Database } from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import type { SkillSnapshot, SkillUse } from '../skills/index.ts';
import {
  getSkill,
  invalidSkills,
  LearnedSkills,
  loadBuiltinHandlers,
  loadSkillRoots,
  skillNameProblem,
  skillOwners,
  skillPageSkeleton,
  skillUse,
  templateSkills,
  validateSkillDir,
  versionView,
} from '../skills/index.ts';
import { userIdProblem } from '../users/index.ts';
import { CliExit, EXIT_ERROR, EXIT_USAGE, stewardInvocation } from './common.ts';
import { callServer, remoteServer, withDatabase } from './remote.ts';

/** Who acts when the install's owner runs a command here (as the owner's API token does). */
const OWNER_USER = 'local';

function snapshot(config: ResolvedConfig): SkillSnapshot {
  return loadSkillRoots([
    { dir: BUILTIN_SKILLS_DIR, source: 'builtin' },
    { dir: config.skillsDir, source: 'user' },
  ]);
}

/** The ledger of learned skills on this install's database (no reload: a running server watches). */
function learnedSkills(config: ResolvedConfig, database: Database): LearnedSkills {
  const loaded = snapshot(config);
  return new LearnedSkills({
    database,
    skillsDir: config.skillsDir,
    builtinDir: BUILTIN_SKILLS_DIR,
    skills: () => loaded,
  });
}

type Usage = { runs: number; failures: number; last_used: string | null };

/**
 * Every skill's use (all users), from the server that owns the data dir, or the database.
 * An embedded database never opened has no calls; a database that cannot be read gives
 * `unknown` with why, never zeros.
 */
async function usageOf(
  config: ResolvedConfig,
  loaded: SkillSnapshot,
): Promise<{ usage: Map<string, Usage> } | { unknown: string }> {
  try {
    const remote = remoteServer(config);
    if (remote) {
      const answer = (await callServer(remote, 'steward skills', 'GET', '/api/skills/usage')) as {
        usage: Record<string, Usage>;
      };
      return { usage: new Map(Object.entries(answer.usage)) };
    }
    if (!config.database_url && !existsSync(path.join(config.dataDir, 'db', 'PG_VERSION')))
      return { usage: new Map() };
    const handlers = await loadBuiltinHandlers();
    const counted = await withDatabase(config, (database) =>
      skillUse(database, {
        templates: templateSkills(loaded, (handler) => handlers.has(handler)),
        owners: skillOwners(loaded),
      }),
    );
    return { usage: new Map([...counted].map(([skill, use]) => [skill, usageView(use)])) };
  } catch (error) {
    return { unknown: error instanceof CliExit ? error.message : errorMessage(error) };
  }
}

function usageView(use: SkillUse): Usage {
  return { runs: use.runs, failures: use.failures, last_used: use.lastUsed?.toISOString() ?? null };
}

/**
 * `steward skills list`: name, access, source, use (runs, failures, last used), description;
 * broken files as invalid, with why. Run on the install by its owner, so it lists every user's
 * owned skills, each labelled with its owner.
 */
export async function skillsList(config: ResolvedConfig, options: { json?: boolean }): Promise<void> {
  const loaded = snapshot(config);
  const skills = [...loaded.skills.values()].sort((a, b) => a.name.localeCompare(b.name));
  const invalid = [...invalidSkills(loaded).values()].sort((a, b) => a.name.localeCompare(b.name));
  const counted = await usageOf(config, loaded);
  if ('unknown' in counted)
    process.stderr.write(`steward skills list: use counts unknown (${counted.unknown})\n`);
  const useOf = (name: string): Usage | null =>
    'usage' in counted ? (counted.usage.get(name) ?? { runs: 0, failures: 0, last_used: null }) : null;
  if (options.json) {
    const rows = [
      ...skills.map(({ name, description, readonly, source, owner }) => {
        const use = useOf(name);
        return {
          name,
          description,
          readonly,
          source,
          owner: owner ?? null,
          runs: use?.runs ?? null,
          failures: use?.failures ?? null,
          last_used: use?.last_used ?? null,
        };
      }),
      ...invalid.map(({ name, path: file, reason }) => ({ name, invalid: reason, path: file })),
    ];
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  const table = [
    ['NAME', 'ACCESS', 'SOURCE', 'RUNS', 'FAILED', 'LAST USED', 'DESCRIPTION'],
    ...skills.map((skill) => {
      const use = useOf(skill.name);
      return [
        skill.name,
        skill.readonly ? 'read-only' : 'mutating',
        skill.source,
        use ? String(use.runs) : '?',
        use ? String(use.failures) : '?',
        use ? (use.last_used?.slice(0, 16).replace('T', ' ') ?? 'never') : '?',
        `${skill.owner ? `[owner ${skill.owner}] ` : ''}${skill.description}`,
      ];
    }),
    ...invalid.map((skill) => [skill.name, 'invalid', 'user', '-', '-', '-', `invalid: ${skill.reason}`]),
  ];
  const widths = table[0]!.map((_, column) => Math.max(...table.map((row) => row[column]!.length)));
  process.stdout.write(
    `${table.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ')).join('\n')}\n`,
  );
  if (invalid.length) {
    process.stdout.write(
      `${invalid.length} skill file(s) invalid and not loaded: fix them, then check with ${stewardInvocation()} skills validate\n`,
    );
  }
}

export type SkillsHistoryOptions = { user?: string; json?: boolean; diff?: boolean };

type VersionView = ReturnType<typeof versionView>;

/**
 * `steward skills history NAME [--user ID] [--json] [--diff]`: every version of a learned skill
 * (who, when, why; the diffs with --diff). Without --user, the one user with a history for it.
 */
export async function skillsHistory(
  config: ResolvedConfig,
  name: string,
  options: SkillsHistoryOptions,
): Promise<void> {
  checkArguments('history', name, options.user);
  const remote = remoteServer(config);
  let found: { user: string; versions: VersionView[] };
  if (remote) {
    const query = options.user ? `?user=${encodeURIComponent(options.user)}` : '';
    found = (await callServer(
      remote,
      'steward skills',
      'GET',
      `/api/skills/${encodeURIComponent(name)}/history${query}`,
    )) as {
      user: string;
      versions: VersionView[];
    };
  } else {
    found = await withDatabase(config, async (database) => {
      const learned = learnedSkills(config, database);
      const user = await resolveUser(learned, name, options.user, 'history');
      return { user, versions: (await learned.history(user, name)).map(versionView) };
    });
  }
  if (found.versions.length === 0)
    throw new CliExit(EXIT_ERROR, `steward skills history: ${name} has no history for user ${found.user}`);
  if (options.json) {
    const rows = found.versions.map(({ version, at, author, reason }) => ({ version, at, author, reason }));
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  const lines = [`${name} (user ${found.user}): ${found.versions.length} version(s)`];
  for (const version of found.versions) {
    lines.push(
      `${String(version.version).padStart(3)}  ${version.at.slice(0, 16).replace('T', ' ')} UTC  ${version.change.padEnd(12)}  ${version.author}: ${version.reason}`,
    );
    if (options.diff && version.diff) lines.push(...version.diff.split('\n').map((line) => `       ${line}`));
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

export type SkillsRollbackOptions = { to: string; user?: string; reason?: string };

/**
 * `steward skills rollback NAME --to VERSION [--user ID]`: writes that version back as a new
 * one (the history only grows); restores a retired skill. Exit 1 when it is refused.
 */
export async function skillsRollback(
  config: ResolvedConfig,
  name: string,
  options: SkillsRollbackOptions,
): Promise<void> {
  checkArguments('rollback', name, options.user);
  const to = Number(options.to);
  if (!Number.isInteger(to) || to < 1)
    throw new CliExit(
      EXIT_USAGE,
      `steward skills rollback: --to must be a version number (1, 2, …), not "${options.to}"`,
    );
  const remote = remoteServer(config);
  let done: { user: string; version: VersionView };
  if (remote) {
    done = (await callServer(
      remote,
      'steward skills',
      'POST',
      `/api/skills/${encodeURIComponent(name)}/rollback`,
      {
        to,
        ...(options.user ? { user: options.user } : {}),
        ...(options.reason ? { reason: options.reason } : {}),
      },
    )) as { user: string; version: VersionView };
  } else {
    done = await withDatabase(config, async (database) => {
      const learned = learnedSkills(config, database);
      const user = await resolveUser(learned, name, options.user, 'rollback');
      const change = await learned.rollback(
        { userId: user, author: OWNER_USER, turnId: null, at: new Date() },
        { name, to, ...(options.reason ? { reason: options.reason } : {}) },
      );
      if (!change.ok) throw new CliExit(EXIT_ERROR, `steward skills rollback: ${change.problem}`);
      return { user, version: versionView(change.version) };
    });
  }
  process.stdout.write(
    `${name} (user ${done.user}) is now version ${done.version.version}: ${done.version.reason}.\n`,
  );
}

function checkArguments(command: string, name: string, user: string | undefined): void {
  const problem = skillNameProblem(name) ?? (user ? userIdProblem(user) : null);
  if (problem) throw new CliExit(EXIT_USAGE, `steward skills ${command}: ${problem}`);
}

async function resolveUser(
  learned: LearnedSkills,
  name: string,
  user: string | undefined,
  command: string,
): Promise<string> {
  if (user) return user;
  const found = await learned.ownerOf(name);
  if ('problem' in found) throw new CliExit(EXIT_ERROR, `steward skills ${command}: ${found.problem}`);
  return found.userId;
}

/** `steward skills show NAME`: the page get_skill serves. */
export function skillsShow(config: ResolvedConfig, name: string): void {
  const result = getSkill(snapshot(config), { path: name });
  process.stdout.write(`${result.content}\n`);
  if (result.status !== 'ok') throw new CliExit(EXIT_ERROR);
}

/** `steward skills validate [DIR]`: every diagnostic; exit 1 when any is an error. */
export function skillsValidate(config: ResolvedConfig, dir: string | undefined): void {
  const roots = dir ? [path.resolve(dir)] : [BUILTIN_SKILLS_DIR, config.skillsDir];
  let errors = 0;
  let warnings = 0;
  for (const root of roots) {
    if (!existsSync(root)) {
      if (dir) throw new CliExit(EXIT_USAGE, `steward skills validate: ${root} does not exist`);
      continue;
    }
    for (const diagnostic of validateSkillDir(root)) {
      if (diagnostic.severity === 'error') errors++;
      else warnings++;
      process.stdout.write(`${diagnostic.severity}: ${diagnostic.path}: ${diagnostic.message}\n`);
    }
  }
  process.stdout.write(`${errors} error(s), ${warnings} warning(s) in ${roots.join(', ')}\n`);
  if (errors > 0) throw new CliExit(EXIT_ERROR);
}

/** `steward skills new DOMAIN.ACTION`: writes a valid page skeleton into the user skills dir. */
export function skillsNew(config: ResolvedConfig, name: string): void {
  const problem = skillNameProblem(name);
  if (problem) throw new CliExit(EXIT_USAGE, `steward skills new: ${problem}`);
  const [domain, action] = name.split('.') as [string, string];
  const file = path.join(config.skillsDir, domain, `${action}.md`);
  if (existsSync(file))
    throw new CliExit(EXIT_ERROR, `steward skills new: ${file} already exists; edit it instead`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, skillPageSkeleton(name));
  process.stdout.write(
    `created ${file}\nEdit it, then check it with: ${stewardInvocation()} skills validate ${config.skillsDir}\n`,
  );
}
