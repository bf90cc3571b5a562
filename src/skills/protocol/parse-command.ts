import { type Token, tokenize } from './tokenize.ts';

/** A bare flag is `true`; one value is a string; several values, or a repeated flag, an array. */
export type FlagValue = string | true | string[];

export type ParsedCommand = {
  /** `tasks.search`, or `get_skill`. Not checked against the registry here. */
  skill: string;
  /** Words before the first flag, and every word after `--`. */
  positionals: string[];
  /** Keyed by normalized name (`--due-before` → `due_before`). Never holds `help`. */
  flags: Record<string, FlagValue>;
  /** `--help` was given. */
  help: boolean;
  /** The command as written, trimmed. */
  raw: string;
};

export type ParseResult = { ok: true; command: ParsedCommand } | { ok: false; error: string };

const SKILL_NAME = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;
const FLAG_NAME = /^[a-z0-9][a-z0-9_]*$/;
const HAS_UPPERCASE = /[A-Z]/;

/** `Due-Before` → `due_before`: the key under which `--due-before` and `--due_before` both land. */
export function normalizeFlagName(name: string): string {
  const lower = HAS_UPPERCASE.test(name) ? name.toLowerCase() : name;
  return lower.includes('-') ? lower.replaceAll('-', '_') : lower;
}

/**
 * Parses one command (DESIGN §4): a skill name, positional words, then `--flag` values.
 * Schema-free on purpose: handlers validate and coerce flags with zod. Never throws; malformed
 * input comes back as `ok: false` with a sentence that says what is wrong and how to fix it.
 */
export function parseCommand(command: string): ParseResult {
  const tokenized = tokenize(command);
  if (!tokenized.ok) return { ok: false, error: tokenized.error };
  const tokens = tokenized.tokens;
  if (tokens.length === 0) {
    return {
      ok: false,
      error: 'Empty command. Write a skill name and its flags, like `tasks.search --status open`.',
    };
  }

  const head = splitHead(tokens[0]!);
  const skillError = checkSkillName(head.skill, tokens[0]!);
  if (skillError !== null) return { ok: false, error: skillError };

  const positionals = head.positional === null ? [] : [head.positional];
  const collected = new Map<string, { values: string[]; occurrences: number }>();
  let help = false;
  let current: string[] | null = null;
  let flagsEnded = false;

  for (let index = 1; index < tokens.length; index++) {
    const token = tokens[index]!;
    if (flagsEnded) {
      positionals.push(token.value);
      continue;
    }
    if (token.quoted || !token.value.startsWith('--')) {
      if (current === null) positionals.push(token.value);
      else current.push(token.value);
      continue;
    }
    if (token.value === '--') {
      flagsEnded = true;
      current = null;
      continue;
    }

    const equals = token.value.indexOf('=');
    const written = equals === -1 ? token.value.slice(2) : token.value.slice(2, equals);
    const name = normalizeFlagName(written);
    if (!FLAG_NAME.test(name)) {
      return {
        ok: false,
        error: `Bad flag \`${token.value}\`: a flag name uses letters, digits, - and _ after the two dashes, like \`--due-before\`. Quote a value that starts with --.`,
      };
    }
    if (name === 'help') {
      help = true;
      current = null;
      continue;
    }
    let entry = collected.get(name);
    if (entry === undefined) {
      entry = { values: [], occurrences: 0 };
      collected.set(name, entry);
    }
    entry.occurrences++;
    if (equals !== -1) entry.values.push(token.value.slice(equals + 1));
    current = entry.values;
  }

  // FLAG_NAME rules out `__proto__`, so plain assignment only ever creates own properties.
  const flags: Record<string, FlagValue> = {};
  for (const [name, { values, occurrences }] of collected) flags[name] = flagValue(values, occurrences);
  return { ok: true, command: { skill: head.skill, positionals, flags, help, raw: command.trim() } };
}

/** A repeated flag is always an array of every value given; bare repetitions add nothing. */
function flagValue(values: string[], occurrences: number): FlagValue {
  if (values.length === 0) return true;
  if (values.length === 1 && occurrences === 1) return values[0]!;
  return values;
}

/** `get_skill: email` and `get_skill:email` both mean skill `get_skill`, positional `email`. */
function splitHead(token: Token): { skill: string; positional: string | null } {
  const colon = token.value.indexOf(':');
  if (colon === -1) return { skill: token.value, positional: null };
  const skill = token.value.slice(0, colon);
  const rest = token.value.slice(colon + 1);
  if (!SKILL_NAME.test(skill)) return { skill: token.value, positional: null };
  return { skill, positional: rest === '' ? null : rest };
}

function checkSkillName(skill: string, token: Token): string | null {
  if (SKILL_NAME.test(skill)) return null;
  const lead = 'A command must start with a skill name like `tasks.search`';
  if (!token.quoted && token.value.startsWith('-')) {
    return `${lead}, but it starts with the flag \`${token.value}\`. Put the skill name first.`;
  }
  if (token.value === '$' || token.value === '>') {
    return `${lead}, but it starts with \`${token.value}\`. Drop the prompt sign.`;
  }
  if (skill.includes('.') && SKILL_NAME.test(skill.toLowerCase())) {
    return `${lead}, but got \`${skill}\`. Skill names are lowercase: \`${skill.toLowerCase()}\`.`;
  }
  return `${lead}, but got \`${truncate(skill)}\`. Names are lowercase words joined by dots.`;
}

function truncate(text: string): string {
  const oneLine = text.replaceAll(/\s+/g, ' ');
  return oneLine.length > 40 ? `${oneLine.slice(0, 40)}…` : oneLine;
}
