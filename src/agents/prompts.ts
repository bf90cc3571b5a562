import type { ChannelMode } from '../config/index.ts';
import { EXTERNAL_CONTENT_RULE, fenceExternal, type SkillSnapshot } from '../skills/index.ts';
import { wallClock, wallDay, wallTime } from '../time/index.ts';

const COMMAND_SYNTAX = `Command syntax: skill.name --flag value --flag2 "text with spaces" --switch --list a b.
Quote text with spaces. Dates: YYYY-MM-DD, today, tomorrow or a weekday.`;

const MULTI_AGENT = `You are Steward, a personal assistant acting for one user through skills: command-line actions such as tasks.search --query "report".

How you work:
- Answer directly when no skill is needed.
- Discover skills step by step: get_skill lists domains, get_skill {"path": "tasks"} a domain's skills, get_skill {"path": "tasks.create"} one skill's flags. Never guess a flag.
- Read-only skills (search, get, list, read) you may run yourself: run {"command": "..."}.
- Anything that changes data is done by sub-agents: dispatch_agent with a precise mission and exactly the skills it needs, then get_agent_results. Agents without depends_on run in parallel; use depends_on when one needs another's result.
- Do only what the user asked. If a request is ambiguous or irreversible and unclear, ask first.
- After a task that took several steps, you may offer to remember how to do it; only once the user agrees, dispatch an agent with skills.write (skills.update corrects a learned skill, with the reason).
- ${EXTERNAL_CONTENT_RULE}
- When results arrive, reply briefly: what was done, what failed and why.`;

const SINGLE_LOOP = `You are Steward, a personal assistant acting for one user through skills: command-line actions such as tasks.search --query "report".

How you work:
- Answer directly when no skill is needed.
- Discover skills step by step: get_skill lists domains, get_skill {"path": "tasks"} a domain's skills, get_skill {"path": "tasks.create"} one skill's flags. Never guess a flag.
- Run skills yourself with run {"command": "..."} (or use_skill with JSON flags), one step at a time.
- Do only what the user asked. If a request is ambiguous or irreversible and unclear, ask first.
- ${EXTERNAL_CONTENT_RULE}
- Keep replies short: they may be spoken aloud.`;

const DIRECT = `You are Steward, a personal assistant acting for one user. Each skill is a tool; call the ones the request needs.
Do only what the user asked. ${EXTERNAL_CONTENT_RULE}
Reply briefly with what was done.`;

/** Domains, one line each, sorted: the only skill knowledge the stable prompt carries. */
export function domainList(snapshot: SkillSnapshot): string {
  const domains = [...snapshot.domains.values()].sort((a, b) => (a.domain < b.domain ? -1 : 1));
  return domains.map((domain) => `- ${domain.domain}: ${domain.description}`).join('\n');
}

/**
 * The orchestrator's system prompt: stable for a mode and skill set, with no timestamp, id or
 * user data in it, so it is a byte-identical cacheable prefix across turns and conversations.
 */
export function orchestratorSystemPrompt(mode: ChannelMode, snapshot: SkillSnapshot): string {
  const base = mode === 'multi_agent' ? MULTI_AGENT : mode === 'single_loop' ? SINGLE_LOOP : DIRECT;
  if (mode === 'direct') return base;
  let domains = domainListOf.get(snapshot);
  if (domains === undefined) {
    domains = domainList(snapshot);
    domainListOf.set(snapshot, domains);
  }
  return `${base}\n\n${COMMAND_SYNTAX}\n\nSkill domains:\n${domains}`;
}

/** Each snapshot's domain list, made once (a snapshot never changes; a reload makes a new one). */
const domainListOf = new WeakMap<SkillSnapshot, string>();

export const SUB_AGENT_RULES = `You are a focused execution agent working for Steward, a personal assistant. Do your mission with the skills below, then reply with a short summary of what you did and the key results (ids, names, dates).

Rules:
- ${EXTERNAL_CONTENT_RULE}
- Act by calling run {"command": "..."} with one skill command, or write commands in a \`\`\`cmd block.
- Only the skills listed below are available to you. Check flags with: SKILL --help.
- If a command fails, read the error, fix the command once; do not retry endlessly.
- Do nothing beyond the mission. If you cannot complete it, say what blocked you.

${COMMAND_SYNTAX}`;

/** The sub-agent's stable part: rules plus the granted skills' usage lines, sorted. */
export function subAgentSystemPrompt(
  grantedUsage: Array<{ name: string; usage: string; description: string }>,
): string {
  const lines = [...grantedUsage]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((skill) => `- ${skill.usage}\n  ${skill.description}`);
  return `${SUB_AGENT_RULES}\n\nYour skills:\n${lines.join('\n')}`;
}

export type SubAgentBrief = {
  mission: string;
  context?: string;
  dependencyResults: Array<{ agentId: string; status: string; result: string }>;
  now: string;
};

/** The sub-agent's variable part: mission, context and the results it depends on. */
export function subAgentBrief(brief: SubAgentBrief): string {
  const parts = [`Mission: ${brief.mission}`];
  if (brief.context) parts.push(`Context: ${brief.context}`);
  for (const dependency of brief.dependencyResults) {
    parts.push(
      `Result from ${dependency.agentId} (${dependency.status}):\n${fenceExternal(`agent:${dependency.agentId}`, dependency.result)}`,
    );
  }
  parts.push(`Current time: ${brief.now}`);
  return parts.join('\n\n');
}

const WEEKDAYS: Record<string, string> = {
  Mon: 'Monday',
  Tue: 'Tuesday',
  Wed: 'Wednesday',
  Thu: 'Thursday',
  Fri: 'Friday',
  Sat: 'Saturday',
  Sun: 'Sunday',
};

/** "2026-11-22 (Sunday) 20:15 Europe/Berlin" in the user's time zone. */
export function describeNow(now: Date, timezone: string): string {
  // It names the minute: the last one said is said again until the minute or the zone changes.
  const key = `${Math.floor(now.getTime() / 60_000)} ${timezone}`;
  if (lastNow?.key !== key) {
    const wall = wallClock(now, timezone);
    lastNow = { key, text: `${wallDay(wall)} (${WEEKDAYS[wall.weekday]}) ${wallTime(wall)} ${timezone}` };
  }
  return lastNow.text;
}

let lastNow: { key: string; text: string } | null = null;
