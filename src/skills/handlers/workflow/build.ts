import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { z } from 'zod';
import { formatInZone } from '../../../time/index.ts';
import { flag } from '../../flags.ts';
import { nextFireTime, parseCron } from '../../registry/cron-schedule.ts';
import { parseFrontmatter } from '../../registry/parse-frontmatter.ts';
import { parseSkillFile } from '../../registry/parse-skill-file.ts';
import { checkSkillMentions } from '../../registry/skill-mentions.ts';
import { NAME_SEGMENT } from '../../registry/skill-name.ts';
import { skillsVisibleTo } from '../../registry/visible-skills.ts';
import { defineHandler, fail, ok, type SkillHandler } from '../../types.ts';

export const WORKFLOW_DOMAIN = 'workflows';
/** The owner of a workflow file without `owner`. */
const DEFAULT_OWNER = 'local';
const OFF = new Set(['off', 'none']);

type ExistingWorkflow = {
  data: Record<string, unknown>;
  body: string;
  source: 'user' | 'builtin';
};

/**
 * workflow.build: writes `<skills dir>/workflows/<name>.md` (a template skill whose body is
 * the instructions a scheduled run follows) and keeps `workflows/SKILL.md` current. Refuses
 * steps naming skills that do not exist (or another user's), an invalid cron or zone, and a name
 * another user's workflow already has.
 */
export const buildWorkflowHandler = defineHandler({
  name: 'workflow.build',
  flags: z
    .object({
      name: flag
        .string()
        .refine(
          (name) => NAME_SEGMENT.test(name),
          'must be lowercase letters, digits and _, starting with a letter (e.g. daily_digest)',
        ),
      description: flag.string().optional(),
      steps: flag.string().optional(),
      schedule: flag.string().optional(),
      timezone: flag.string().optional(),
      catch_up: flag.string().optional(),
    })
    .strict(),
  async execute(flags, ctx) {
    const workflows = ctx.services.workflows;
    if (!workflows) return fail('workflow.build needs the skills directory of a running Steward.');
    const skillName = `${WORKFLOW_DOMAIN}.${flags.name}`;
    const dir = path.join(workflows.skillsDir, WORKFLOW_DOMAIN);
    const file = path.join(dir, `${flags.name}.md`);
    const existing = readExisting(file, path.join(workflows.builtinDir, WORKFLOW_DOMAIN, `${flags.name}.md`));
    if (existing && existing.source === 'user') {
      const owner = typeof existing.data.owner === 'string' ? existing.data.owner : DEFAULT_OWNER;
      // Names are shared by every user of the install: say the name is taken, never whose it is
      // or what it does, and leave the other user's file untouched.
      if (owner !== ctx.user.id)
        return fail(
          `The name ${skillName} is already taken on this Steward (workflow names are shared by all its users): choose another --name.`,
        );
    }
    if (!existing && flags.steps === undefined)
      return fail(`${skillName} does not exist yet: give --steps (what to do, naming the skills to use).`);
    const description =
      flags.description ??
      (typeof existing?.data.description === 'string' ? existing.data.description : undefined);
    if (description === undefined) return fail('give --description: one line saying what the workflow does.');

    const problems: string[] = [];
    let body = existing?.body.trim() ?? '';
    if (flags.steps !== undefined) {
      const mentions = checkSkillMentions(flags.steps, skillsVisibleTo(workflows.skills(), ctx.user.id));
      for (const unknown of mentions.unknown) {
        problems.push(
          `unknown skill "${unknown.name}"${unknown.closest.length ? ` (closest: ${unknown.closest.join(', ')})` : ''}`,
        );
      }
      if (mentions.unknown.length === 0 && mentions.known.includes(skillName))
        problems.push(`the steps name ${skillName} itself: a workflow cannot run itself`);
      body = renderBody(skillName, description, flags.steps);
    }
    const schedule = pick(flags.schedule, existing?.data.schedule);
    const timezone = pick(flags.timezone, existing?.data.timezone);
    const catchUp = flags.catch_up ?? existing?.data.catch_up;
    if (schedule !== undefined) {
      const cron = parseCron(schedule);
      if (!cron.ok) problems.push(cron.problem);
    }
    const frontmatter: Record<string, unknown> = {
      name: skillName,
      description,
      owner: ctx.user.id,
      ...(schedule !== undefined ? { schedule } : {}),
      ...(timezone !== undefined ? { timezone } : {}),
      ...(catchUp !== undefined ? { catch_up: catchUp } : {}),
      created:
        typeof existing?.data.created === 'string'
          ? existing.data.created
          : ctx.now().toISOString().slice(0, 10),
    };
    const text = `---\n${stringify(frontmatter).trimEnd()}\n---\n\n${body}\n`;
    const parsed = parseSkillFile({
      path: file,
      text,
      domain: WORKFLOW_DOMAIN,
      action: flags.name,
      source: 'user',
    });
    for (const diagnostic of parsed.diagnostics)
      if (
        diagnostic.severity === 'error' &&
        !problems.some((problem) => diagnostic.message.includes(problem))
      )
        problems.push(diagnostic.message);
    if (problems.length > 0 || !parsed.skill) {
      return fail(
        `${skillName} was not saved:\n${problems.map((problem) => `- ${problem}`).join('\n')}\nFix the flags and run workflow.build again.`,
      );
    }

    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeAtomically(file, text);
    writeIndex(dir, path.join(workflows.builtinDir, WORKFLOW_DOMAIN));
    const zone = timezone ?? ctx.user.timezone;
    const next = schedule ? nextRun(schedule, zone, ctx.now()) : null;
    const when = schedule
      ? ` It runs on "${schedule}" in ${zone}${next ? `; next run ${next}` : ''}.`
      : ' It has no schedule: run it with steward schedules run, or add --schedule.';
    // Relative to the skills dir: a user is never shown where the server keeps its files.
    const shownPath = path.relative(workflows.skillsDir, file).split(path.sep).join('/');
    return ok(`Saved ${skillName} (${shownPath}).${when}`, {
      sideEffects: [`wrote ${shownPath}`],
      metadata: {
        skill: skillName,
        path: shownPath,
        owner: ctx.user.id,
        schedule: schedule ?? null,
        timezone: zone,
        next_run: next,
      },
      receipt: schedule ? `${skillName} ("${schedule}" in ${zone})` : skillName,
    });
  },
});

function pick(flagValue: string | undefined, existing: unknown): string | undefined {
  if (flagValue !== undefined) return OFF.has(flagValue.toLowerCase()) ? undefined : flagValue;
  return typeof existing === 'string' ? existing : undefined;
}

function nextRun(schedule: string, zone: string, now: Date): string | null {
  const cron = parseCron(schedule);
  if (!cron.ok) return null;
  const next = nextFireTime(cron.cron, zone, now);
  return next ? formatInZone(next, zone) : null;
}

function renderBody(skillName: string, description: string, steps: string): string {
  return `# ${skillName}\n\n${description}\n\n## Steps\n\n${steps.trim()}`;
}

function readExisting(userFile: string, builtinFile: string): ExistingWorkflow | null {
  for (const [file, source] of [
    [userFile, 'user'],
    [builtinFile, 'builtin'],
  ] as const) {
    if (!existsSync(file)) continue;
    const parsed = parseFrontmatter(readFileSync(file, 'utf8'));
    // An unparseable file is replaced whole by what the flags say.
    if (parsed.status === 'ok') return { data: parsed.data, body: parsed.body, source };
  }
  return null;
}

function writeAtomically(file: string, text: string): void {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  writeFileSync(temporary, text, { mode: 0o600 });
  renameSync(temporary, file);
}

/** `workflows/SKILL.md` in the user dir: every workflow (built-in and the user's), with its schedule. */
function writeIndex(userDir: string, builtinDir: string): void {
  const entries = new Map<string, string>();
  for (const dir of [builtinDir, userDir]) {
    let names: string[] = [];
    try {
      names = readdirSync(dir).filter(
        (name) => name.endsWith('.md') && name !== 'SKILL.md' && !name.startsWith('.'),
      );
    } catch {
      continue;
    }
    for (const name of names) {
      const parsed = parseFrontmatter(readFileSync(path.join(dir, name), 'utf8'));
      if (parsed.status !== 'ok') continue;
      const action = name.slice(0, -'.md'.length);
      const description = typeof parsed.data.description === 'string' ? parsed.data.description : '';
      const schedule =
        typeof parsed.data.schedule === 'string'
          ? `runs "${parsed.data.schedule}"${typeof parsed.data.timezone === 'string' ? ` (${parsed.data.timezone})` : ''}`
          : 'not scheduled';
      entries.set(action, `| ${WORKFLOW_DOMAIN}.${action} | ${description} | ${schedule} |`);
    }
  }
  const rows = [...entries.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, row]) => row);
  const text = [
    '---',
    `domain: ${WORKFLOW_DOMAIN}`,
    'description: Workflows - repeatable routines composed of skills, run on a schedule or on demand',
    '---',
    '',
    '# Workflows',
    '',
    'Each workflow is a page of instructions that names the skills it uses. Running one returns',
    'those instructions to follow; a scheduled one runs on its own and its result is delivered to',
    'its owner. Create or change them with workflow.build.',
    '',
    '## Available Skills',
    '',
    '| Skill | Description | Schedule |',
    '|-------|-------------|----------|',
    ...rows,
    '',
  ].join('\n');
  writeAtomically(path.join(userDir, 'SKILL.md'), text);
}

export const workflowHandlers: SkillHandler[] = [buildWorkflowHandler];
