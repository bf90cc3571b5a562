import type { ResolvedConfig } from '../config/index.ts';
import {
  type AgentSkillPlan,
  decideImport,
  type ImportDecision,
  readAgentSkills,
  writeImportedSkill,
} from '../skills/index.ts';
import { CliExit, EXIT_ERROR, EXIT_OK, EXIT_USAGE } from './common.ts';

export type SkillsImportOptions = { domain: string; dryRun?: boolean; force?: boolean; json?: boolean };

const MARK = { note: ' ', warning: '!', danger: '!!' } as const;

/**
 * `steward skills import PATH`: AgentSkills folders (SKILL.md + files) become template skills in
 * the user skills dir. Shows what will be added and every finding (scripts, URLs,
 * credential-looking strings, exfiltration instructions) first; never executes anything. A skill
 * with dangerous findings, an invalid one, or one that exists already is skipped unless --force.
 * Exit 0 when everything was added (or would be, with --dry-run), 1 when any was skipped.
 */
export function skillsImport(config: ResolvedConfig, source: string, options: SkillsImportOptions): never {
  if (!/^[a-z][a-z0-9_]*$/.test(options.domain))
    throw new CliExit(
      EXIT_USAGE,
      `steward skills import: --domain "${options.domain}" is not a skill domain name (lower-case letters, digits, _)`,
    );
  let plans: AgentSkillPlan[];
  try {
    plans = readAgentSkills(source, options.domain);
  } catch (error) {
    throw new CliExit(EXIT_USAGE, `steward skills import: ${(error as Error).message}`);
  }
  const decisions = decideImport(plans, config.skillsDir, options.force === true);
  const today = new Date().toISOString().slice(0, 10);
  if (!options.dryRun)
    for (const decision of decisions)
      if (decision.status === 'add') writeImportedSkill(decision, config.skillsDir, today);
  const added = decisions.filter((decision) => decision.status === 'add');
  if (options.json) {
    const rows = decisions.map(({ plan, status, reason, file }) => ({
      name: plan.name,
      from: plan.source,
      description: plan.description,
      status: status === 'add' ? (options.dryRun ? 'would_add' : 'added') : 'skipped',
      ...(reason ? { reason } : {}),
      file,
      files: plan.files,
      findings: plan.risks,
    }));
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  } else {
    process.stdout.write(`${report(source, decisions, options.dryRun === true)}\n`);
  }
  throw new CliExit(added.length === decisions.length ? EXIT_OK : EXIT_ERROR);
}

function report(source: string, decisions: readonly ImportDecision[], dryRun: boolean): string {
  const lines = [`AgentSkills in ${source}: ${decisions.length}`, ''];
  for (const { plan, status, reason, file } of decisions) {
    lines.push(`${status === 'add' ? '+' : '-'} ${plan.name}  (from ${plan.originalName || plan.source})`);
    if (plan.description) lines.push(`    ${plan.description}`);
    for (const bundled of plan.files)
      lines.push(
        `    file ${bundled.file} (${bundled.size} bytes): ${bundled.handling === 'inline' ? 'included in the page' : 'kept for reference, never run'}`,
      );
    for (const risk of plan.risks)
      lines.push(
        `  ${MARK[risk.level].padEnd(2)} ${risk.kind.padEnd(12)} ${risk.file}${risk.line ? `:${risk.line}` : ''}  ${risk.detail}`,
      );
    lines.push(
      status === 'add' ? `    → ${dryRun ? 'would write' : 'wrote'} ${file}` : `    → skipped: ${reason}`,
      '',
    );
  }
  const added = decisions.filter((decision) => decision.status === 'add').length;
  lines.push(
    dryRun
      ? `Dry run: nothing written. ${added} of ${decisions.length} would be added.`
      : `${added} of ${decisions.length} added as template skills (running one returns its instructions; Steward runs none of the bundled files).`,
  );
  return lines.join('\n');
}
