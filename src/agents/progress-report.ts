import type { AgentBoard } from './orchestrator-loop.ts';
import type { SubAgentOutcome } from './sub-agent.ts';

const brief = (text: string, max = 160) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
};

/**
 * What a paused turn tells the user: why it stopped, what was done, what was not, and how
 * to go on. Built from the turn's records, not by a model, so it is always accurate.
 */
export function progressReport(reason: string, board: AgentBoard, skillCalls: string[]): string {
  const done: string[] = [];
  const notDone: string[] = [];
  for (const spec of board.specs.values()) {
    const outcome: SubAgentOutcome | undefined = board.outcomes.get(spec.agentId);
    if (outcome?.status === 'completed') done.push(`${spec.agentId}: ${brief(outcome.result)}`);
    else if (outcome)
      notDone.push(`${spec.agentId} (${outcome.status}): ${brief(outcome.error ?? outcome.result)}`);
    else notDone.push(`${spec.agentId}: not started (${brief(spec.mission, 100)})`);
  }
  for (const call of skillCalls) done.push(call);
  const lines = [`I stopped because I reached ${reason}.`];
  lines.push('', 'Done:', ...(done.length ? done.map((line) => `- ${line}`) : ['- nothing yet']));
  if (notDone.length) lines.push('', 'Not done:', ...notDone.map((line) => `- ${line}`));
  lines.push('', 'Reply "continue" to go on from here.');
  return lines.join('\n');
}

/** A plain yes / continue from the user. */
export function isAffirmative(text: string): boolean {
  const cleaned = text
    .trim()
    .toLowerCase()
    .replace(/[.!]+$/, '');
  if (cleaned.length > 40) return false;
  return /^(y|yes|yeah|yep|yup|ok|okay|sure|confirm|confirmed|go ahead|do it|go on|continue|proceed|please do|please continue|yes please|approve|approved)$/.test(
    cleaned,
  );
}
