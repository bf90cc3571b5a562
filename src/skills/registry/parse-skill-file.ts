import { isTimeZone } from '../../time/index.ts';
import { userIdProblem } from '../../users/index.ts';
import type { Diagnostic, DomainIndex, SkillDefinition, SkillSource } from '../types.ts';
import { parseCron } from './cron-schedule.ts';
import { markdownSection } from './markdown-section.ts';
import { parseFrontmatter } from './parse-frontmatter.ts';
import { NAME_SEGMENT, skillNameProblem } from './skill-name.ts';

const SKILL_KEYS = [
  'name',
  'description',
  'handler',
  'readonly',
  'confirm',
  'schedule',
  'timezone',
  'timeout',
  'tags',
  'author',
  'created',
  'owner',
  'catch_up',
  'learned_from',
  'learned_at',
];
const INDEX_KEYS = ['domain', 'description'];

export type SkillFileInput = {
  /** Absolute path of `<root>/<domain>/<action>.md`. */
  path: string;
  text: string;
  domain: string;
  action: string;
  source: SkillSource;
};

/**
 * Validates one skill file. Never throws: every problem is a diagnostic, and `skill` is null
 * when any of them is an error.
 */
export function parseSkillFile(input: SkillFileInput): {
  skill: SkillDefinition | null;
  diagnostics: Diagnostic[];
} {
  const errors: string[] = [];
  const warnings: string[] = [];
  const expectedName = `${input.domain}.${input.action}`;
  const pathProblem = skillNameProblem(expectedName);
  if (pathProblem) errors.push(`file path does not make a valid skill name: ${pathProblem}`);

  const parsed = parseFrontmatter(input.text);
  if (parsed.status === 'error') {
    errors.push(parsed.message);
    return { skill: null, diagnostics: toDiagnostics(input.path, errors, warnings) };
  }
  const fields = new FieldReader(parsed.data, errors);
  for (const key of Object.keys(parsed.data)) {
    if (!SKILL_KEYS.includes(key))
      warnings.push(`unknown frontmatter key "${key}" (known: ${SKILL_KEYS.join(', ')})`);
  }

  const name = fields.string('name', { required: true });
  if (name !== undefined && !pathProblem) {
    const nameProblem = skillNameProblem(name);
    if (nameProblem) errors.push(`bad name: ${nameProblem}`);
    else if (name !== expectedName) {
      errors.push(`name "${name}" does not match the file path, which makes it "${expectedName}"`);
    }
  }
  const description = fields.string('description', { required: true });
  const handler = fields.string('handler');
  // Never guessed from the action's name (`calendar.free` only reads, `email.read` marks read):
  // a skill that does not say it only reads is treated as mutating. Every built-in says.
  const readonly = fields.boolean('readonly') ?? false;
  const confirm = fields.boolean('confirm') ?? !readonly;
  const schedule = fields.string('schedule');
  if (schedule !== undefined) {
    const cron = parseCron(schedule);
    if (!cron.ok) errors.push(`bad schedule: ${cron.problem}`);
  }
  const timezone = fields.string('timezone');
  if (timezone !== undefined && !isTimeZone(timezone)) {
    errors.push(`timezone "${timezone}" is not an IANA time zone (e.g. Europe/Paris)`);
  }
  const owner = fields.string('owner');
  if (owner !== undefined) {
    const problem = userIdProblem(owner);
    if (problem) errors.push(`bad owner: ${problem}`);
  }
  const catchUp = fields.duration('catch_up');
  const timeout = fields.positiveNumber('timeout');
  const tags = fields.stringList('tags') ?? [];
  const author = fields.string('author');
  const created = fields.string('created');
  const learnedFrom = fields.string('learned_from');
  const learnedAt = fields.string('learned_at');

  const diagnostics = toDiagnostics(input.path, errors, warnings);
  if (errors.length > 0 || description === undefined) return { skill: null, diagnostics };

  const body = parsed.body.trim();
  const skill: SkillDefinition = {
    name: expectedName,
    domain: input.domain,
    action: input.action,
    description,
    readonly,
    confirm,
    handler: handler ?? expectedName,
    tags: Object.freeze(tags) as string[],
    body,
    usage: usageLine(body) ?? `${expectedName} [flags]`,
    source: input.source,
    path: input.path,
  };
  if (schedule !== undefined) skill.schedule = schedule;
  if (timezone !== undefined) skill.timezone = timezone;
  if (owner !== undefined) skill.owner = owner;
  if (catchUp !== undefined) skill.catchUpSeconds = catchUp;
  if (timeout !== undefined) skill.timeoutMs = Math.round(timeout * 1000);
  if (author !== undefined) skill.author = author;
  if (created !== undefined) skill.created = created;
  if (learnedFrom !== undefined) skill.learnedFrom = learnedFrom;
  if (learnedAt !== undefined) skill.learnedAt = learnedAt;
  return { skill: Object.freeze(skill), diagnostics };
}

export type DomainIndexInput = { path: string; text: string; domain: string; source: SkillSource };

/** Validates a `SKILL.md`: frontmatter `description` required, `domain` (if given) must match the folder. */
export function parseDomainIndexFile(input: DomainIndexInput): {
  index: DomainIndex | null;
  diagnostics: Diagnostic[];
} {
  const errors: string[] = [];
  const warnings: string[] = [];
  if (!NAME_SEGMENT.test(input.domain)) errors.push(domainFolderProblem(input.domain));
  const parsed = parseFrontmatter(input.text);
  if (parsed.status === 'error') {
    errors.push(parsed.message);
    return { index: null, diagnostics: toDiagnostics(input.path, errors, warnings) };
  }
  const fields = new FieldReader(parsed.data, errors);
  for (const key of Object.keys(parsed.data)) {
    if (!INDEX_KEYS.includes(key))
      warnings.push(`unknown frontmatter key "${key}" (known: ${INDEX_KEYS.join(', ')})`);
  }
  const domain = fields.string('domain');
  if (domain !== undefined && domain !== input.domain) {
    errors.push(`domain "${domain}" does not match the folder name "${input.domain}"`);
  }
  const description = fields.string('description', { required: true });
  const diagnostics = toDiagnostics(input.path, errors, warnings);
  if (errors.length > 0 || description === undefined) return { index: null, diagnostics };
  const index: DomainIndex = {
    domain: input.domain,
    description,
    body: parsed.body.trim(),
    source: input.source,
    path: input.path,
    generated: false,
  };
  return { index: Object.freeze(index), diagnostics };
}

export function domainFolderProblem(folder: string): string {
  return `domain folder "${folder}" is not a valid domain name: use lowercase letters, digits and _, starting with a letter`;
}

/** First non-empty line of the `## Usage` section, without code fences or backticks. */
export function usageLine(body: string): string | null {
  for (const line of markdownSection(body, 'Usage') ?? []) {
    if (/^\s*(```|~~~)/.test(line)) continue;
    const text = line.replaceAll('`', '').trim();
    if (text !== '') return text;
  }
  return null;
}

function toDiagnostics(path: string, errors: string[], warnings: string[]): Diagnostic[] {
  return [
    ...errors.map((message) => ({ path, severity: 'error' as const, message })),
    ...warnings.map((message) => ({ path, severity: 'warning' as const, message })),
  ];
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Date) return 'a date';
  if (typeof value === 'object' && value !== null) return 'a mapping';
  return `${typeof value} ${JSON.stringify(value)}`;
}

/** Reads typed frontmatter fields; a wrong type becomes an error message and `undefined`. */
class FieldReader {
  readonly #data: Record<string, unknown>;
  readonly #errors: string[];

  constructor(data: Record<string, unknown>, errors: string[]) {
    this.#data = data;
    this.#errors = errors;
  }

  #present(key: string, required: boolean): unknown {
    const value = this.#data[key];
    if (value === undefined || value === null) {
      if (required) this.#errors.push(`missing required field "${key}"`);
      return undefined;
    }
    return value;
  }

  string(key: string, options: { required?: boolean } = {}): string | undefined {
    const value = this.#present(key, options.required ?? false);
    if (value === undefined) return undefined;
    if (value instanceof Date) return value.toISOString().slice(0, 10);
    if (typeof value !== 'string') {
      this.#errors.push(`"${key}" must be text, not ${describe(value)}`);
      return undefined;
    }
    const text = value.trim();
    if (text === '' && options.required) {
      this.#errors.push(`"${key}" must not be empty`);
      return undefined;
    }
    return text;
  }

  boolean(key: string): boolean | undefined {
    const value = this.#present(key, false);
    if (value === undefined || typeof value === 'boolean') return value;
    this.#errors.push(`"${key}" must be true or false, not ${describe(value)}`);
    return undefined;
  }

  positiveNumber(key: string): number | undefined {
    const value = this.#present(key, false);
    if (value === undefined) return undefined;
    if (typeof value === 'number' && Number.isFinite(value) && value > 0) return value;
    this.#errors.push(`"${key}" must be a positive number of seconds, not ${describe(value)}`);
    return undefined;
  }

  /** Seconds from `90`, `"90s"`, `"30m"`, `"1h"`, `"1h30m"`, `"2d"` or `0`. */
  duration(key: string): number | undefined {
    const value = this.#present(key, false);
    if (value === undefined) return undefined;
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
    const text = typeof value === 'string' ? value.trim().toLowerCase() : '';
    const match = /^(?:(\d+)d)?\s*(?:(\d+)h)?\s*(?:(\d+)m)?\s*(?:(\d+)s?)?$/.exec(text);
    if (text !== '' && match) {
      const [, days, hours, minutes, seconds] = match;
      return (
        Number(days ?? 0) * 86_400 +
        Number(hours ?? 0) * 3600 +
        Number(minutes ?? 0) * 60 +
        Number(seconds ?? 0)
      );
    }
    this.#errors.push(
      `"${key}" must be a duration such as 0, 90s, 30m, 1h or 1h30m (0: never catch up), not ${describe(value)}`,
    );
    return undefined;
  }

  stringList(key: string): string[] | undefined {
    const value = this.#present(key, false);
    if (value === undefined) return undefined;
    if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return [...value];
    this.#errors.push(`"${key}" must be a list of text, e.g. [email, communication], not ${describe(value)}`);
    return undefined;
  }
}
