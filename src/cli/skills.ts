import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ResolvedConfig } from '../config/index.ts';
import { BUILTIN_SKILLS_DIR } from '../runtime.ts';
import type { SkillSnapshot } from '../skills/index.ts';
import {
  getSkill,
  invalidSkills,
  loadSkillRoots,
  skillNameProblem,
  skillPageSkeleton,
  validateSkillDir,
} from '../skills/index.ts';
import { CliExit, EXIT_ERROR, EXIT_USAGE } from './common.ts';

function snapshot(config: ResolvedConfig): SkillSnapshot {
  return loadSkillRoots([
    { dir: BUILTIN_SKILLS_DIR, source: 'builtin' },
    { dir: config.skillsDir, source: 'user' },
  ]);
}

/**
 * `steward skills list`: name, description, read-only, source; broken files as invalid, with why.
 * Run on the install by its owner, so it lists every user's workflows, each labelled with its owner.
 */
export function skillsList(config: ResolvedConfig, options: { json?: boolean }): void {
  const loaded = snapshot(config);
  const skills = [...loaded.skills.values()].sort((a, b) => a.name.localeCompare(b.name));
  const invalid = [...invalidSkills(loaded).values()].sort((a, b) => a.name.localeCompare(b.name));
  if (options.json) {
    const rows = [
      ...skills.map(({ name, description, readonly, source, owner }) => ({
        name,
        description,
        readonly,
        source,
        ...(owner ? { owner } : {}),
      })),
      ...invalid.map(({ name, path: file, reason }) => ({ name, invalid: reason, path: file })),
    ];
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  const width = Math.max(
    4,
    ...skills.map((skill) => skill.name.length),
    ...invalid.map((s) => s.name.length),
  );
  const lines = skills.map(
    (skill) =>
      `${skill.name.padEnd(width)}  ${(skill.readonly ? 'read-only' : 'mutating').padEnd(9)}  ${skill.source.padEnd(7)}  ${skill.owner ? `[owner ${skill.owner}] ` : ''}${skill.description}`,
  );
  for (const skill of invalid) {
    lines.push(
      `${skill.name.padEnd(width)}  ${'invalid'.padEnd(9)}  ${'user'.padEnd(7)}  invalid: ${skill.reason}`,
    );
  }
  process.stdout.write(
    `${[`${'NAME'.padEnd(width)}  ${'ACCESS'.padEnd(9)}  ${'SOURCE'.padEnd(7)}  DESCRIPTION`, ...lines].join('\n')}\n`,
  );
  if (invalid.length) {
    process.stdout.write(
      `${invalid.length} skill file(s) invalid and not loaded: fix them, then check with steward skills validate\n`,
    );
  }
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
    `created ${file}\nEdit it, then check it with: steward skills validate ${config.skillsDir}\n`,
  );
}
