import { randomUUID } from 'node:crypto';
import type { Database } from '../../db/index.ts';
import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../logging/logger.ts';
import { type ParsedCommand, parseCommand } from '../protocol/index.ts';
import { closestSkills, getSkill, skillHelp } from '../registry/index.ts';
import type {
  SkillContext,
  SkillDefinition,
  SkillHandler,
  SkillResult,
  SkillServices,
  SkillSnapshot,
  SkillUser,
} from '../types.ts';
import { type BreakerOptions, CircuitBreakers } from './circuit-breaker.ts';
import { describeFlagErrors } from './flag-errors.ts';
import type { Sentinel } from './sentinel.ts';

/** Who is calling: decides which skills are in scope (DESIGN invariant 4). */
export type Caller =
  | { kind: 'orchestrator'; allowMutating: boolean }
  | {
      kind: 'agent';
      agentId: string;
      grantedSkills: readonly string[];
      mission: string;
      parentExecutionId: string | null;
    }
  | { kind: 'cli' };

export type ExecuteRequest = {
  command: string;
  caller: Caller;
  user: SkillUser;
  conversationId?: string | null;
  channel?: string;
  turnId?: string | null;
  /** The user's own words that started the turn, for the sentinel. */
  originalRequest?: string;
  /** The user confirmed exactly this command: skip the sentinel for this one call. */
  confirmed?: boolean;
  signal?: AbortSignal;
};

export type ExecutionOutcome = SkillResult & {
  executionId: string;
  skill: string | null;
  durationMs: number;
};

/** Returns a reason when `skill` is out of the caller's scope, else null. */
export type ScopeCheck = (skill: SkillDefinition, caller: Caller) => string | null;

export type ExecutorOptions = {
  database: Database;
  skills: () => SkillSnapshot;
  handlers: ReadonlyMap<string, SkillHandler>;
  services: SkillServices;
  logger: Logger;
  sentinel?: Sentinel | null;
  scopeCheck?: ScopeCheck;
  defaultTimeoutMs?: number;
  maxResultChars?: number;
  breaker?: Partial<BreakerOptions>;
  now?: () => Date;
  randomId?: () => string;
};

/** Matches a granted skill list: exact names, or `domain.*` for a whole domain. */
export function isGranted(skill: string, granted: readonly string[]): boolean {
  const domain = skill.split('.')[0];
  return granted.some((entry) => entry === skill || entry === `${domain}.*`);
}

export const defaultScopeCheck: ScopeCheck = (skill, caller) => {
  if (caller.kind === 'agent' && !isGranted(skill.name, caller.grantedSkills)) {
    return `${skill.name} is not among this agent's granted skills (${caller.grantedSkills.join(', ') || 'none'}). Do only your mission with the skills you were given, and report what else is needed.`;
  }
  if (caller.kind === 'orchestrator' && !caller.allowMutating && !skill.readonly) {
    return `${skill.name} changes data, so the orchestrator cannot run it directly. Delegate it: dispatch_agent with skills ["${skill.name}"] and a mission.`;
  }
  return null;
};

class TimeoutError extends Error {}

/**
 * The executor pipeline of DESIGN §5: parse → resolve → scope → flags → circuit breaker →
 * sentinel → handler (timeout, AbortSignal) → truncation → execution row → breaker
 * bookkeeping. Never throws to its caller: every failure is an error result.
 */
export class SkillExecutor {
  readonly #options: ExecutorOptions;
  readonly #breakers: CircuitBreakers;
  readonly #now: () => Date;
  readonly #randomId: () => string;

  constructor(options: ExecutorOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
    this.#randomId = options.randomId ?? randomUUID;
    this.#breakers = new CircuitBreakers(options.database, options.breaker, this.#now);
  }

  get breakers(): CircuitBreakers {
    return this.#breakers;
  }

  async execute(request: ExecuteRequest): Promise<ExecutionOutcome> {
    const executionId = this.#randomId();
    const started = this.#now();
    const startedMs = performance.now();
    let parsed: ParsedCommand | null = null;
    let result: SkillResult;
    try {
      const outcome = await this.#run(request, executionId);
      parsed = outcome.parsed;
      result = outcome.result;
    } catch (error) {
      // A bug below us: report it as a result, log the details.
      this.#options.logger.error(
        { err: error, command: request.command },
        'skill execution failed unexpectedly',
      );
      result = {
        status: 'error',
        content: `Internal error while running the command: ${errorMessage(error)}`,
      };
    }
    result = this.#truncate(result);
    const durationMs = Math.round(performance.now() - startedMs);
    await this.#log(request, executionId, parsed, result, started, durationMs);
    return { ...result, executionId, skill: parsed?.skill ?? null, durationMs };
  }

  async #run(
    request: ExecuteRequest,
    executionId: string,
  ): Promise<{ parsed: ParsedCommand | null; result: SkillResult }> {
    const parse = parseCommand(request.command);
    if (!parse.ok) return { parsed: null, result: { status: 'error', content: parse.error } };
    const parsed = parse.command;
    const snapshot = this.#options.skills();

    if (parsed.skill === 'get_skill') {
      const search = parsed.flags.search;
      const path = parsed.positionals[0];
      return {
        parsed,
        result: getSkill(snapshot, {
          path,
          search: Array.isArray(search) ? search.join(' ') : typeof search === 'string' ? search : undefined,
        }),
      };
    }

    const skill = snapshot.skills.get(parsed.skill);
    if (!skill) {
      const closest = closestSkills(snapshot, parsed.skill, 3);
      const hint = closest.length ? ` Did you mean: ${closest.join(', ')}?` : '';
      return {
        parsed,
        result: {
          status: 'error',
          content: `Unknown skill "${parsed.skill}".${hint} Use get_skill to list domains, or get_skill --search "words".`,
        },
      };
    }
    if (parsed.help) return { parsed, result: skillHelp(snapshot, skill.name) };

    const scopeProblem = (this.#options.scopeCheck ?? defaultScopeCheck)(skill, request.caller);
    if (scopeProblem) {
      return {
        parsed,
        result: { status: 'error', content: `Refused: ${scopeProblem}`, metadata: { refused: 'scope' } },
      };
    }

    const handler = this.#options.handlers.get(skill.handler);
    if (!handler) {
      // A template skill (a workflow): its body is the instructions to follow.
      return {
        parsed,
        result: {
          status: 'ok',
          content: `Instructions for ${skill.name} — follow them step by step with the skills they name:\n\n${skill.body.trim()}`,
          metadata: { template: true },
        },
      };
    }

    if (parsed.positionals.length > 0) {
      return {
        parsed,
        result: {
          status: 'error',
          content: `${skill.name} takes flags only, but got "${parsed.positionals.join(' ')}". Write values as --flag value (quote text with spaces). See \`${skill.name} --help\`.`,
        },
      };
    }
    const flags = handler.flags.safeParse(parsed.flags);
    if (!flags.success) {
      return {
        parsed,
        result: { status: 'error', content: describeFlagErrors(skill.name, handler.flags, flags.error) },
      };
    }

    const breaker = await this.#breakers.check(skill.name);
    if (!breaker.allowed) {
      const seconds = Math.ceil(breaker.retryInMs / 1000);
      return {
        parsed,
        result: {
          status: 'error',
          content: `${skill.name} is paused after repeated failures (circuit breaker open). Try again in ${seconds} s, or tell the user it is unavailable.`,
          metadata: { circuit: 'open' },
        },
      };
    }

    const signal = request.signal ?? new AbortController().signal;
    if (skill.confirm && !request.confirmed && this.#options.sentinel) {
      const decision = await this.#options.sentinel.review({
        originalRequest: request.originalRequest ?? '',
        mission: request.caller.kind === 'agent' ? request.caller.mission : null,
        command: request.command,
        skill,
        userId: request.user.id,
        turnId: request.turnId ?? null,
        executionId,
        signal,
      });
      await this.#options.database.query(
        `INSERT INTO sentinel_decisions (execution_id, turn_id, user_id, skill, command, mission, original_request, approved, reasoning, model)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          executionId,
          request.turnId ?? null,
          request.user.id,
          skill.name,
          request.command,
          request.caller.kind === 'agent' ? request.caller.mission : null,
          request.originalRequest ?? null,
          decision.approved,
          decision.reasoning,
          decision.model ?? null,
        ],
      );
      if (!decision.approved) {
        return {
          parsed,
          result: {
            status: 'error',
            content: `Not done: the safety check stopped ${skill.name} (${decision.reasoning}). Do not retry it; report that it needs the user's confirmation.`,
            metadata: { refused: 'sentinel', reasoning: decision.reasoning, command: request.command },
          },
        };
      }
    }

    const outcome = await this.#invoke(skill, handler, flags.data, request, executionId, signal);
    if (outcome.failure) await this.#breakers.recordFailure(skill.name, outcome.failure);
    else await this.#breakers.recordSuccess(skill.name);
    return { parsed, result: outcome.result };
  }

  async #invoke(
    skill: SkillDefinition,
    handler: SkillHandler,
    flags: Record<string, unknown>,
    request: ExecuteRequest,
    executionId: string,
    callerSignal: AbortSignal,
  ): Promise<{ result: SkillResult; failure: string | null }> {
    const timeoutMs = skill.timeoutMs ?? this.#options.defaultTimeoutMs ?? 30_000;
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
      services: this.#options.services,
      logger: this.#options.logger.child({ skill: skill.name, executionId }),
      now: this.#now,
    };
    const aborted = new Promise<never>((_, reject) => {
      if (signal.aborted) reject(signal.reason);
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
    try {
      const result = await Promise.race([handler.execute(flags, ctx), aborted]);
      return { result, failure: null };
    } catch (error) {
      if (error instanceof TimeoutError) {
        return {
          result: {
            status: 'error',
            content: `${skill.name} ${error.message} and was stopped.`,
            metadata: { timeout: true },
          },
          failure: error.message,
        };
      }
      if (callerSignal.aborted) {
        return { result: { status: 'error', content: `${skill.name} was cancelled.` }, failure: null };
      }
      const message = errorMessage(error);
      this.#options.logger.error({ err: error, skill: skill.name }, 'skill handler threw');
      return { result: { status: 'error', content: `${skill.name} failed: ${message}` }, failure: message };
    } finally {
      clearTimeout(timer);
    }
  }

  #truncate(result: SkillResult): SkillResult {
    const max = this.#options.maxResultChars ?? 8_000;
    if (result.content.length <= max) return result;
    const hidden = result.content.length - max;
    return {
      ...result,
      content: `${result.content.slice(0, max)}\n…[truncated: ${hidden} more characters not shown. Narrow the request (filters, --limit) to see the rest.]`,
      metadata: { ...result.metadata, truncated: hidden },
    };
  }

  async #log(
    request: ExecuteRequest,
    executionId: string,
    parsed: ParsedCommand | null,
    result: SkillResult,
    started: Date,
    durationMs: number,
  ): Promise<void> {
    const refused = result.metadata?.refused !== undefined;
    const timedOut = result.metadata?.timeout === true;
    const status = refused ? 'refused' : timedOut ? 'timeout' : result.status;
    try {
      await this.#options.database.query(
        `INSERT INTO skill_executions
           (id, parent_id, turn_id, user_id, conversation_id, kind, agent_id, mission, skill, command, flags, status, result, error, started_at, finished_at, duration_ms)
         VALUES ($1, $2, $3, $4, $5, 'skill', $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
        [
          executionId,
          request.caller.kind === 'agent' ? request.caller.parentExecutionId : null,
          request.turnId ?? null,
          request.user.id,
          request.conversationId ?? null,
          request.caller.kind === 'agent' ? request.caller.agentId : null,
          request.caller.kind === 'agent' ? request.caller.mission : null,
          parsed?.skill ?? null,
          request.command,
          parsed ? JSON.stringify(parsed.flags) : null,
          status,
          result.status === 'ok' ? result.content : null,
          result.status === 'error' ? result.content : null,
          started,
          new Date(started.getTime() + durationMs),
          durationMs,
        ],
      );
    } catch (error) {
      this.#options.logger.error({ err: error }, 'could not record a skill execution');
    }
  }
}
