import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import type { AgentSkillPlan } from './agent-skills.ts';

export type ImportDecision = { plan: AgentSkillPlan; status: 'add' | 'skip'; reason?: string; file: string };

/** Where bundled files are kept: a dot folder, which the skill loader never reads. */
export const KEPT_FILES_DIR = '.agentskills';

/**
 * What an import would do with each plan: add it, or skip it because it is invalid, already
 * exists, or has dangerous findings (unless `force`).
 */
export function decideImport(
  plans: readonly AgentSkillPlan[],
  skillsDir: string,
  force: boolean,
): ImportDecision[] {
  return plans.map((plan) => {
    const [domain, action] = plan.name.split('.') as [string, string];
    const file = path.join(skillsDir, domain, `${action}.md`);
    if (plan.problem) return { plan, status: 'skip', reason: plan.problem, file };
    if (existsSync(file) && !force)
      return { plan, status: 'skip', reason: `${file} already exists (--force replaces it)`, file };
    if (plan.risks.some((risk) => risk.level === 'danger') && !force) {
      return {
        plan,
        status: 'skip',
        reason: 'it has dangerous findings: review them, then re-run with --force to import it anyway',
        file,
      };
    }
    return { plan, status: 'add', file };
  });
}

/**
 * Writes one template skill: frontmatter Steward validates, the SKILL.md body, the list of
 * bundled files, and text references inlined. Other files are copied under
 * `<skills dir>/.agentskills/<name>/` without execute permission. Nothing is run.
 */
export function writeImportedSkill(decision: ImportDecision, skillsDir: string, today: string): void {
  const { plan, file } = decision;
  const keptDir = path.join(skillsDir, KEPT_FILES_DIR, plan.name);
  const frontmatter = stringify({
    name: plan.name,
    description: plan.description,
    readonly: true,
    tags: ['agentskills', 'imported'],
    ...(plan.author ? { author: plan.author } : {}),
    created: today,
  }).trim();
  const listing = plan.files.map(
    (bundled) =>
      `- ${bundled.file} — ${bundled.handling === 'inline' ? 'included below' : `kept at ${path.join(keptDir, bundled.file)}, never run by Steward`}`,
  );
  const references = plan.files
    .filter((bundled) => bundled.handling === 'inline')
    .map(
      (bundled) =>
        `## Reference: ${bundled.file}\n\n${readFileSync(path.join(plan.source, bundled.file), 'utf8').trim()}`,
    );
  const origin = `Imported from the AgentSkills folder ${plan.source} ("${plan.originalName}"${plan.license ? `, license ${plan.license}` : ''}) on ${today}.`;
  const page = [
    `---\n${frontmatter}\n---`,
    plan.body,
    '## Bundled files',
    [origin, ...(listing.length ? ['', ...listing] : [])].join('\n'),
    ...references,
  ].join('\n\n');
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${page}\n`, { mode: 0o600 });
  for (const bundled of plan.files.filter((entry) => entry.handling === 'keep')) {
    const target = path.join(keptDir, bundled.file);
    mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
    copyFileSync(path.join(plan.source, bundled.file), target);
    chmodSync(target, 0o600);
  }
}
