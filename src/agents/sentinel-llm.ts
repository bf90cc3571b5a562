import { errorMessage } from '../errors.ts';
import type { LlmClient } from '../llm/index.ts';
import type { Logger } from '../logging/index.ts';
import type { Sentinel, SentinelDecision, SentinelRequest } from '../skills/index.ts';

const SENTINEL_PROMPT = `You are a safety check for a personal assistant. An agent proposes to run a command that changes the user's data or acts on their behalf. Decide whether the command is something the user actually asked for.

Approve when the command plainly serves the user's request. Refuse when it does something the user did not ask for, targets other people or data than requested, or is more destructive than needed. You see only the user's request, the agent's mission and the command.

Answer with only a JSON object: {"reasoning": "<one or two sentences>", "decision": true or false}`;

/**
 * Reads `{reasoning, decision}` tolerantly: the first JSON object in the text; decision as a
 * boolean or a word (approve/yes/true…). Anything unparsable is a refusal.
 */
export function parseSentinelAnswer(text: string): SentinelDecision {
  const match = /\{[\s\S]*\}/.exec(text);
  if (match) {
    try {
      const value = JSON.parse(match[0]) as { reasoning?: unknown; decision?: unknown; approved?: unknown };
      const raw = value.decision ?? value.approved;
      const reasoning =
        typeof value.reasoning === 'string' && value.reasoning.trim()
          ? value.reasoning.trim()
          : 'no reasoning given';
      if (typeof raw === 'boolean') return { approved: raw, reasoning };
      if (typeof raw === 'string') {
        const word = raw.trim().toLowerCase();
        if (['true', 'yes', 'approve', 'approved', 'allow', 'ok'].includes(word))
          return { approved: true, reasoning };
        if (['false', 'no', 'refuse', 'refused', 'deny', 'denied', 'reject'].includes(word)) {
          return { approved: false, reasoning };
        }
      }
    } catch {
      // fall through: unparsable
    }
  }
  return {
    approved: false,
    reasoning: 'the safety check gave no clear decision, so the action was not approved',
  };
}

/** The sentinel on the roster's `sentinel` role: a separate, cheap model call. */
export class LlmSentinel implements Sentinel {
  readonly #llm: LlmClient;
  readonly #logger: Logger;

  constructor(llm: LlmClient, logger: Logger) {
    this.#llm = llm;
    this.#logger = logger;
  }

  async review(request: SentinelRequest): Promise<SentinelDecision> {
    const facts = [
      `User's request: ${request.originalRequest || '(none recorded)'}`,
      `Agent's mission: ${request.mission ?? '(the assistant itself, no sub-agent)'}`,
      `Proposed command: ${request.command}`,
    ].join('\n');
    try {
      const response = await this.#llm.chat({
        role: 'sentinel',
        messages: [
          { role: 'system', content: SENTINEL_PROMPT },
          { role: 'user', content: facts },
        ],
        json: true,
        temperature: 0,
        signal: request.signal,
        context: { turnId: request.turnId, executionId: request.executionId, userId: request.userId },
      });
      return { ...parseSentinelAnswer(response.text), model: response.model };
    } catch (error) {
      this.#logger.warn({ err: error }, 'sentinel call failed; refusing the action');
      return { approved: false, reasoning: `the safety check could not run (${errorMessage(error)})` };
    }
  }
}
