import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../logging/index.ts';
import type { SkillContext, SkillDefinition, SkillHandler, SkillResult, SkillServices } from '../types.ts';
import type { ExecuteRequest } from './executor-types.ts';
import { failureKind } from './failure-kind.ts';

class TimeoutError extends Error {}

export type InvokeDeps = {
  defaultTimeoutMs: number | undefined;
  services: SkillServices;
  logger: Logger;
  now: () => Date;
};

/**
 * Runs a skill's handler under its timeout and the caller's AbortSignal. Never throws: a
 * timeout, a cancel, a bad value or a crash becomes an error result (and, for the breaker, a
 * failure kind).
 */
export async function invokeHandler(
  deps: InvokeDeps,
  skill: SkillDefinition,
  handler: SkillHandler,
  flags: Record<string, unknown>,
  request: ExecuteRequest,
  executionId: string,
  callerSignal: AbortSignal,
): Promise<{
  result: SkillResult;
  failure: { kind: 'infrastructure' | 'unexpected'; message: string } | null;
}> {
  const timeoutMs = skill.timeoutMs ?? deps.defaultTimeoutMs ?? 30_000;
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new TimeoutError(`timed out after ${timeoutMs} ms`)),
    timeoutMs,
  );
  const signal = AbortSignal.any([callerSignal, controller.signal]);
  const ctx: SkillContext = {
    user: request.user,
    conversationId: request.conversationId ?? null,
    channel: request.channel ?? 'cli',
    agentId: request.caller.kind === 'agent' ? request.caller.agentId : null,
    turnId: request.turnId ?? null,
    executionId,
    signal,
    services: deps.services,
    logger: deps.logger.child({ skill: skill.name, executionId }),
    now: deps.now,
  };
  const aborted = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
  try {
    const result = await Promise.race([handler.execute(flags, ctx), aborted]);
    return { result, failure: null };
  } catch (error) {
    // A mutating handler stopped half-way may already have done its work: say so.
    const mayHaveHappened = skill.readonly ? '' : ' It may have happened — check before redoing.';
    if (error instanceof TimeoutError) {
      return {
        result: {
          status: 'error',
          content: `${skill.name} ${error.message} and was stopped.${mayHaveHappened}`,
          metadata: { timeout: true },
        },
        failure: { kind: 'infrastructure', message: error.message },
      };
    }
    if (callerSignal.aborted) {
      return {
        result: {
          status: 'error',
          content: `${skill.name} was cancelled while it ran.${mayHaveHappened}`,
          metadata: { cancelled: true },
        },
        failure: null,
      };
    }
    const message = errorMessage(error);
    const kind = failureKind(error);
    if (kind === 'input') {
      return {
        result: {
          status: 'error',
          content: `${skill.name} could not store that value: ${message}. Change the value and try again.`,
          metadata: { invalid: 'value' },
        },
        failure: null,
      };
    }
    deps.logger.error({ err: error, skill: skill.name }, 'skill handler threw');
    return {
      result: { status: 'error', content: `${skill.name} failed: ${message}` },
      failure: { kind, message },
    };
  } finally {
    clearTimeout(timer);
  }
}
