import { type ExecutionOutcome, fencedSources, fenceExternal } from '../skills/index.ts';

/**
 * A skill call's result as an agent sees it. Results are data, never instructions: a handler's
 * output is fenced as `skill:<name>` unless the handler already fenced its outside parts
 * (email:…, file:…); Steward's own pages (get_skill, --help) and template instructions are not.
 */
export function resultForModel(outcome: ExecutionOutcome): string {
  if (outcome.status !== 'ok') return `Error: ${outcome.content}`;
  if (!outcome.skill || outcome.metadata?.help || outcome.metadata?.template) return outcome.content;
  if (fencedSources(outcome.content).length > 0) return outcome.content;
  return fenceExternal(`skill:${outcome.skill}`, outcome.content);
}
