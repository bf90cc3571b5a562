import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Database, Queryable } from '../../db/index.ts';
import { parseFrontmatter } from '../registry/parse-frontmatter.ts';
import { parseSkillFile } from '../registry/parse-skill-file.ts';
import { skillNameProblem } from '../registry/skill-name.ts';
import { skillsVisibleTo } from '../registry/visible-skills.ts';
import type { SkillSnapshot } from '../types.ts';
import {
  type LearnedPageFields,
  learnedPageProblems,
  learnedPageRisks,
  normalizedBody,
  RESERVED_DOMAINS,
  renderLearnedPage,
  STEWARD_AUTHOR,
} from './learned-page.ts';
import { lineDiff } from './line-diff.ts';
import { type Disk, fieldsOf, moveAside, readDisk, writePage } from './page-files.ts';
import { dangerous, refused, taken, unknownSkill } from './refusals.ts';
import {
  appendVersion,
  latestVersion,
  latestVersions,
  lockSkillName,
  ownersOf,
  type SkillVersion,
  versionsOf,
} from './skill-ledger.ts';
import { skillUse, skillUseSince } from './skill-use.ts';

/** Where retired pages are kept: a dot folder, which the skill loader never reads. */
export const RETIRED_DIR = '.retired';
/** A learned skill not run (nor changed) for this long is listed for review. */
export const REVIEW_UNUSED_DAYS = 60;
/** …and one with at least this many failed runs since its last change, half its runs or more. */
export const REVIEW_MIN_FAILURES = 3;
const DAY_MS = 86_400_000;
const OUTSIDE_EDIT = 'changed outside Steward (its file was edited)';

export type LearnedSkillsOptions = {
  database: Database;
  /** The user skills directory, where learned pages are written. */
  skillsDir: string;
  /** The built-in skills directory: its names are never taken. */
  builtinDir: string;
  /** The whole current snapshot, every user's skills included. */
  skills: () => SkillSnapshot;
  /** Makes a change live at once (re-reads the skill files); without it the watcher does. */
  reload?: () => void;
};

/** Who makes a change, and when. `author`: `steward` for an agent, else the user's id. */
export type LearnedActor = { userId: string; author: string; turnId: string | null; at: Date };

/** The outcome of a change: the version it made, or why nothing changed (a fix to act on). */
export type LearnedChange =
  | { ok: true; version: SkillVersion; file: string }
  | { ok: false; problem: string; findings?: string[] };

/** A learned skill of one user with its use, and why it should be reviewed (empty: fine). */
export type LearnedSkillView = {
  name: string;
  description: string;
  version: number;
  /** When the current version was made. */
  versionAt: Date;
  runs: number;
  failures: number;
  lastUsed: Date | null;
  review: string[];
};

/**
 * Learned skills: template pages an agent (or the user) writes into the user skills directory,
 * owned by that user, and their ledger — every version kept with who, when, why and the diff.
 * Write, update, retire and rollback each run in one transaction that holds the name's lock;
 * the page is written last, and put back if the transaction does not commit. Expected
 * failures are `{ok: false}` values; only infrastructure that is down throws.
 */
export class LearnedSkills {
  readonly #options: LearnedSkillsOptions;

  constructor(options: LearnedSkillsOptions) {
    this.#options = options;
  }

  /** The database the ledger is in (use counts are read from the same one). */
  get database(): Database {
    return this.#options.database;
  }

  /** `skills.write`: a new learned skill (or one retired before, learned again) at version 1 (or next). */
  async write(
    actor: LearnedActor,
    input: { name: string; description: string; body: string; reason?: string },
  ): Promise<LearnedChange> {
    const clash = this.#nameProblem(input.name);
    if (clash) return refused(clash);
    const checked = this.#checkPage(actor.userId, input.name, input.description.trim(), input.body);
    if (!checked.ok) return checked;
    return this.#change(
      input.name,
      async (tx, disk) => {
        const latest = await latestVersion(tx, actor.userId, input.name);
        if (disk.text !== null) {
          if (disk.owner !== actor.userId) return refused(taken(input.name));
          if (!latest) {
            return refused(
              `${input.name} already exists as a skill file Steward did not write: choose another --name.`,
            );
          }
          return refused(
            `${input.name} already exists: change it with skills.update --name ${input.name} --reason "why"`,
          );
        }
        const fields: LearnedPageFields = {
          name: input.name,
          description: input.description.trim(),
          owner: actor.userId,
          author: actor.author,
          learnedFrom: actor.turnId,
          learnedAt: actor.at.toISOString(),
        };
        const text = renderLearnedPage(fields, checked.body);
        const reason =
          input.reason?.trim() ||
          (latest?.change === 'retire'
            ? 'learned again after its retirement'
            : actor.turnId
              ? 'learned in a conversation'
              : 'written with skills.write');
        return {
          entry: { change: 'write', reason, content: text, diff: lineDiff(latest?.content ?? '', text) },
          text,
        };
      },
      actor,
    );
  }

  /** `skills.update`: a new version with a changed description and/or body, and its reason. */
  async update(
    actor: LearnedActor,
    input: { name: string; description?: string; body?: string; reason: string },
  ): Promise<LearnedChange> {
    const clash = this.#nameProblem(input.name);
    if (clash) return refused(clash);
    if (input.description === undefined && input.body === undefined)
      return refused('give --description and/or --body: what should change.');
    if (!input.reason.trim()) return refused('give --reason: why it changes (kept in its history).');
    return this.#change(
      input.name,
      async (tx, disk) => {
        const current = await this.#current(tx, actor, input.name, disk, 'skills.update');
        if ('problem' in current) return current;
        const data = disk.data!;
        const description = input.description?.trim() ?? String(data.description ?? '');
        const existingBody = parseFrontmatter(disk.text!);
        const rawBody = input.body ?? (existingBody.status === 'ok' ? existingBody.body : '');
        const checked = this.#checkPage(actor.userId, input.name, description, rawBody);
        if (!checked.ok) return checked;
        const text = renderLearnedPage(fieldsOf(input.name, description, data), checked.body);
        if (text === disk.text)
          return refused(`${input.name} already reads exactly like that: nothing changed.`);
        return {
          entry: {
            change: 'update',
            reason: input.reason.trim(),
            content: text,
            diff: lineDiff(disk.text!, text),
          },
          text,
          before: current.extra,
        };
      },
      actor,
    );
  }

  /** `skills.retire`: the skill stops being loaded; its page and history are kept. */
  async retire(actor: LearnedActor, input: { name: string; reason: string }): Promise<LearnedChange> {
    const clash = this.#nameProblem(input.name);
    if (clash) return refused(clash);
    if (!input.reason.trim()) return refused('give --reason: why it is retired (kept in its history).');
    return this.#change(
      input.name,
      async (tx, disk) => {
        const current = await this.#current(tx, actor, input.name, disk, 'skills.retire');
        if ('problem' in current) return current;
        return {
          entry: { change: 'retire', reason: input.reason.trim(), content: disk.text!, diff: '' },
          text: null,
          before: current.extra,
        };
      },
      actor,
    );
  }

  /**
   * Writes version `to` back as a new version (history only grows). Restores a retired skill;
   * refuses when the name is now someone else's or a built-in's, or the page would be refused
   * today.
   */
  async rollback(
    actor: LearnedActor,
    input: { name: string; to: number; reason?: string },
  ): Promise<LearnedChange> {
    const clash = this.#nameProblem(input.name);
    if (clash) return refused(clash);
    return this.#change(
      input.name,
      async (tx, disk) => {
        const versions = await versionsOf(tx, actor.userId, input.name);
        const latest = versions.at(-1);
        if (!latest) return refused(`${input.name} has no history for user ${actor.userId}.`);
        const target = versions.find((version) => version.version === input.to);
        if (!target) {
          return refused(
            `${input.name} has versions 1 to ${latest.version}: roll back to one of them (steward skills history ${input.name}).`,
          );
        }
        if (target.change === 'retire') {
          return refused(
            `version ${target.version} is the retirement of ${input.name}; roll back to a version before it to restore the skill.`,
          );
        }
        if (disk.text !== null && disk.owner !== actor.userId) return refused(taken(input.name));
        if (disk.text === target.content)
          return refused(
            `${input.name} already reads exactly like version ${target.version}: nothing changed.`,
          );
        const parsed = parseFrontmatter(target.content);
        const body = parsed.status === 'ok' ? parsed.body : target.content;
        const description = parsed.status === 'ok' ? String(parsed.data.description ?? '') : '';
        const findings = learnedPageRisks(description, body);
        if (findings.length) return dangerous(input.name, findings, 'was not rolled back');
        const before: PendingVersion[] = [];
        if (disk.text !== null && latest.change !== 'retire' && disk.text !== latest.content)
          before.push(outsideEdit(latest.content, disk.text));
        const reason = `rolled back to version ${target.version}${input.reason?.trim() ? `: ${input.reason.trim()}` : ''}`;
        return {
          entry: {
            change: 'rollback',
            reason,
            content: target.content,
            diff: lineDiff(disk.text ?? latest.content, target.content),
          },
          text: target.content,
          before,
        };
      },
      actor,
    );
  }

  /** Every version of `userId`'s `name`, oldest first (empty: no history). */
  history(userId: string, name: string): Promise<SkillVersion[]> {
    return versionsOf(this.#options.database, userId, name);
  }

  /** The users who have a history for `name`. */
  owners(name: string): Promise<string[]> {
    return ownersOf(this.#options.database, name);
  }

  /**
   * Whose `name` a command means when it names no user: the one user with a history for it.
   * For the install's owner (CLI, owner token), who may act on every user's skills.
   */
  async ownerOf(name: string): Promise<{ userId: string } | { problem: string }> {
    const owners = await this.owners(name);
    if (owners.length === 1) return { userId: owners[0]! };
    if (owners.length === 0)
      return { problem: `${name} has no history: only learned skills (written with skills.write) have one.` };
    return { problem: `${name} has a history for several users (${owners.join(', ')}): give --user.` };
  }

  /** The newest version of every learned skill (of one user, or everyone's), retired ones included. */
  latest(userId?: string): Promise<SkillVersion[]> {
    return latestVersions(this.#options.database, userId);
  }

  /**
   * `userId`'s learned skills (not retired) with their use, each with the reasons to review it:
   * not run nor changed for 60 days, or failing often since its last change. Nothing is
   * deleted here: the user decides.
   */
  async list(userId: string, at: Date): Promise<LearnedSkillView[]> {
    const database = this.#options.database;
    const snapshot = skillsVisibleTo(this.#options.skills(), userId);
    const live = (await latestVersions(database, userId)).filter((version) => version.change !== 'retire');
    if (live.length === 0) return [];
    const names = live.map((version) => version.name);
    const [overall, recent] = await Promise.all([
      skillUse(database, { userId, skills: names, templates: names }),
      skillUseSince(database, userId, new Map(live.map((version) => [version.name, version.at])), names),
    ]);
    return live.map((version) => {
      const use = overall.get(version.name);
      const sinceChange = recent.get(version.name) ?? { runs: 0, failures: 0 };
      const lastUsed = use?.lastUsed ?? null;
      const idleSince = Math.max(lastUsed?.getTime() ?? 0, version.at.getTime());
      const review: string[] = [];
      const idleDays = Math.floor((at.getTime() - idleSince) / DAY_MS);
      if (idleDays >= REVIEW_UNUSED_DAYS)
        review.push(lastUsed ? `not used for ${idleDays} days` : `never used in ${idleDays} days`);
      if (sinceChange.failures >= REVIEW_MIN_FAILURES && sinceChange.failures * 2 >= sinceChange.runs)
        review.push(
          `failed ${sinceChange.failures} of ${sinceChange.runs} runs since version ${version.version}`,
        );
      const parsed = parseFrontmatter(version.content);
      return {
        name: version.name,
        description:
          snapshot.skills.get(version.name)?.description ??
          (parsed.status === 'ok' ? String(parsed.data.description ?? '') : ''),
        version: version.version,
        versionAt: version.at,
        runs: use?.runs ?? 0,
        failures: use?.failures ?? 0,
        lastUsed,
        review,
      };
    });
  }

  /** Where `name`'s page lives in the user skills directory. */
  file(name: string): string {
    const [domain, action] = name.split('.') as [string, string];
    return path.join(this.#options.skillsDir, domain, `${action}.md`);
  }

  /** Why `name` cannot be a learned skill at all (a built-in's, a server's, a reserved domain), or null. */
  #nameProblem(name: string): string | null {
    const problem = skillNameProblem(name);
    if (problem) return `${problem}.`;
    const [domain, action] = name.split('.') as [string, string];
    if (RESERVED_DOMAINS.includes(domain)) {
      return `the ${domain} domain belongs to Steward's own skills: put the skill under a domain of its subject (e.g. travel.plan_trip).`;
    }
    const snapshot = this.#options.skills();
    const existing = snapshot.skills.get(name);
    if (
      existing?.source === 'builtin' ||
      existing?.shadows?.source === 'builtin' ||
      existsSync(path.join(this.#options.builtinDir, domain, `${action}.md`))
    )
      return `${name} is a built-in skill's name: a learned skill never replaces or changes a built-in; choose another --name.`;
    if (existing?.source === 'mcp' || snapshot.domains.get(domain)?.source === 'mcp')
      return `the ${domain} domain comes from an MCP server: choose another domain.`;
    return null;
  }

  /** The description and body as a valid learned page, or why not (format first, then safety). */
  #checkPage(
    userId: string,
    name: string,
    description: string,
    body: string,
  ): { ok: true; body: string } | { ok: false; problem: string; findings?: string[] } {
    const visible = skillsVisibleTo(this.#options.skills(), userId);
    const problems = learnedPageProblems(name, description, body, visible);
    if (problems.length) {
      return refused(
        `${name} was not saved:\n${problems.map((problem) => `- ${problem}`).join('\n')}\nFix it and try again.`,
      );
    }
    const findings = learnedPageRisks(description, body);
    if (findings.length) return dangerous(name, findings, 'was not saved');
    const normalized = normalizedBody(name, description, body);
    // The page as the loader will read it (frontmatter values here only need to be valid).
    const fields = {
      name,
      description,
      owner: userId,
      author: STEWARD_AUTHOR,
      learnedFrom: null,
      learnedAt: new Date(0).toISOString(),
    };
    const [domain, action] = name.split('.') as [string, string];
    const parsed = parseSkillFile({
      path: this.file(name),
      text: renderLearnedPage(fields, normalized),
      domain,
      action,
      source: 'user',
    });
    const errors = parsed.diagnostics.filter((diagnostic) => diagnostic.severity === 'error');
    if (errors.length || !parsed.skill)
      return refused(`${name} was not saved: ${errors.map((error) => error.message).join('; ')}`);
    return { ok: true, body: normalized };
  }

  /**
   * The user's live learned skill `name` as found on disk, with an `outside_edit` version to
   * record first when its file changed since the ledger's latest version.
   */
  async #current(
    tx: Queryable,
    actor: LearnedActor,
    name: string,
    disk: Disk,
    skill: string,
  ): Promise<{ extra: PendingVersion[] } | { ok: false; problem: string }> {
    const latest = await latestVersion(tx, actor.userId, name);
    if (disk.text === null || disk.owner !== actor.userId) {
      // Another user's skill reads exactly like one that does not exist.
      if (!latest || disk.text !== null) return refused(unknownSkill(name));
      if (latest.change === 'retire')
        return refused(
          `${name} is retired. To use it again, restore it: steward skills rollback ${name} --to ${latest.version - 1}.`,
        );
      return refused(
        `${name}'s page was removed outside Steward. Restore a version with steward skills rollback ${name} --to ${latest.version}.`,
      );
    }
    if (!latest) {
      return refused(
        `${name} is not a learned skill (Steward did not write it), so ${skill} cannot change it; its file is edited by hand.`,
      );
    }
    return { extra: latest.content === disk.text ? [] : [outsideEdit(latest.content, disk.text)] };
  }

  /** Runs one change under the name's lock, then writes (or retires) the page and reloads. */
  async #change(
    name: string,
    plan: (
      tx: Queryable,
      disk: Disk,
    ) => Promise<PlannedChange | { ok: false; problem: string; findings?: string[] }>,
    actor: LearnedActor,
  ): Promise<LearnedChange> {
    const file = this.file(name);
    const retired = path.join(
      this.#options.skillsDir,
      RETIRED_DIR,
      encodeURIComponent(actor.userId),
      ...name.split('.').map((part, index) => (index === 1 ? `${part}.md` : part)),
    );
    let undo: (() => void) | null = null;
    try {
      const outcome = await this.#options.database.transaction(async (tx) => {
        await lockSkillName(tx, name);
        const disk = readDisk(file);
        const planned = await plan(tx, disk);
        if ('ok' in planned) return planned;
        for (const extra of planned.before ?? [])
          await appendVersion(tx, {
            owner: actor.userId,
            name,
            change: 'outside_edit',
            author: 'unknown',
            reason: extra.reason,
            content: extra.content,
            diff: extra.diff,
            turnId: null,
            at: actor.at,
          });
        const version = await appendVersion(tx, {
          owner: actor.userId,
          name,
          author: actor.author,
          turnId: actor.turnId,
          at: actor.at,
          ...planned.entry,
        });
        // The page goes last: a failure here rolls the ledger back with it.
        undo = planned.text === null ? moveAside(file, retired) : writePage(file, planned.text, disk.text);
        return { ok: true as const, version, file: planned.text === null ? retired : file };
      });
      undo = null;
      if (outcome.ok) this.#options.reload?.();
      return outcome;
    } finally {
      // The transaction did not commit: the page goes back to what it was.
      (undo as (() => void) | null)?.();
    }
  }
}

type PendingVersion = { change: 'outside_edit'; reason: string; content: string; diff: string };

type PlannedChange = {
  entry: { change: SkillVersion['change']; reason: string; content: string; diff: string };
  /** The page to write, or null to retire it. */
  text: string | null;
  before?: ReadonlyArray<{ reason: string; content: string; diff: string }>;
};

function outsideEdit(recorded: string, found: string): PendingVersion {
  return { change: 'outside_edit', reason: OUTSIDE_EDIT, content: found, diff: lineDiff(recorded, found) };
}
