import { randomUUID } from 'node:crypto';
import { errorMessage } from '../../errors.ts';
import { withLogContext } from '../../logging/index.ts';
import {
  type ExecutionRecord,
  finishSkillCall,
  recordSkillCall,
  type SkillCallEnd,
  startSkillCall,
} from '../executions.ts';
import { cutFenced, fencedSources, isOutsideSource } from '../external.ts';
import { type ParsedCommand, parseCommand } from '../protocol/index.ts';
import { outsideTexts, TurnQuotes } from '../quoted-text.ts';
import {
  closestSkills,
  getSkill,
  invalidSkills,
  skillHelp,
  skillsVisibleTo,
  type UnavailableDomain,
} from '../registry/index.ts';
import type { SkillDefinition, SkillResult } from '../types.ts';
import { CircuitBreakers } from './circuit-breaker.ts';
import { isSkillDisabled } from './disabled-skills.ts';
import type { ExecuteRequest, ExecutionOutcome, ExecutorOptions } from './executor-types.ts';
import { unstorableCharacter } from './failure-kind.ts';
import { describeFlagErrors } from './flag-errors.ts';
import { invokeHandler } from './invoke-handler.ts';
import { oneLine, receiptDetailFromFlags } from './receipt-detail.ts';
import { defaultScopeCheck } from './scope.ts';
import { recordSentinelDecision } from './sentinel-decisions.ts';
import { templateFlagProblem } from './template-flags.ts';

/**
 * The executor pipeline of DESIGN §5: parse → resolve → scope → flags → circuit breaker →
 * sentinel → handler (timeout, AbortSignal) → truncation → execution row → breaker
 * bookkeeping. Never throws to its caller: every failure is an error result. A call that
 * reaches its handler is recorded as running first, so a crash cannot hide its effect.
 */
export class SkillExecutor {
  readonly #options: ExecutorOptions;
  readonly #breakers: CircuitBreakers;
  readonly #now: () => Date;
  readonly #randomId: () => string;
  /**
   * Turns that have read fenced outside text, with what they read: their mutating calls always
   * see the sentinel, and the sentinel never sees that text (copies of it are redacted).
   */
  readonly #taintedTurns = new Map<string, TurnQuotes>();

  constructor(options: ExecutorOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
    this.#randomId = options.randomId ?? randomUUID;
    this.#breakers = new CircuitBreakers(options.database, options.breaker, this.#now);
  }

  get breakers(): CircuitBreakers {
    return this.#breakers;
  }

  /**
   * Marks a turn as having read external content (done for every fenced result it gets; the
   * turn engine also passes the history the model is shown). `content`'s outside fences are
   * remembered so the sentinel is never shown copies of them.
   */
  taintTurn(turnId: string, content = ''): void {
    let quotes = this.#taintedTurns.get(turnId);
    if (!quotes) {
      quotes = new TurnQuotes();
      this.#taintedTurns.set(turnId, quotes);
    }
    quotes.add(outsideTexts(content));
  }

  /** The turn ended: forget what it read. */
  endTurn(turnId: string): void {
    this.#taintedTurns.delete(turnId);
  }

  async execute(request: ExecuteRequest): Promise<ExecutionOutcome> {
    const executionId = this.#randomId();
    const started = this.#now();
    const startedMs = performance.now();
    const call: CallState = { parsed: null, recordedRunning: false, receipt: null };
    let result: SkillResult;
    try {
      // Every line logged while the call runs carries its turn, agent and execution ids.
      const agentId = request.caller.kind === 'agent' ? request.caller.agentId : undefined;
      const ids = { turnId: request.turnId ?? undefined, agentId, executionId };
      result = await withLogContext(ids, () => this.#run(request, executionId, started, call));
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
    if (request.turnId && result.status === 'ok' && fencedSources(result.content).some(isOutsideSource)) {
      this.taintTurn(request.turnId, result.content);
    }
    const durationMs = Math.round(performance.now() - startedMs);
    const callStatus = await this.#log(request, executionId, call, result, started, durationMs);
    return {
      ...result,
      executionId,
      skill: call.parsed?.skill ?? null,
      durationMs,
      callStatus,
      effect: call.receipt !== null,
    };
  }

  async #run(
    request: ExecuteRequest,
    executionId: string,
    started: Date,
    call: CallState,
  ): Promise<SkillResult> {
    const unstorable = unstorableCharacter(request.command);
    if (unstorable) {
      return {
        status: 'error',
        content: `The command contains ${unstorable.what} at character ${unstorable.index + 1}; remove it and send the command again.`,
        metadata: { invalid: 'characters' },
      };
    }
    const parse = parseCommand(request.command);
    if (!parse.ok) return { status: 'error', content: parse.error };
    const parsed = parse.command;
    call.parsed = parsed;
    // Another user's workflow is absent here: unknown, never "forbidden".
    const snapshot = skillsVisibleTo(this.#options.skills(), request.user.id);

    if (parsed.skill === 'get_skill') {
      const search = parsed.flags.search;
      const path = parsed.positionals[0];
      return asHelp(
        getSkill(
          snapshot,
          {
            path,
            search: Array.isArray(search)
              ? search.join(' ')
              : typeof search === 'string'
                ? search
                : undefined,
          },
          await this.#unavailable(request.user.id),
        ),
      );
    }

    const skill = snapshot.skills.get(parsed.skill);
    // A domain whose MCP server is down: its skills may not even be known, but the reason is.
    const domainDown = snapshot.domains.get(parsed.skill.split('.')[0]!)?.unavailable;
    if (!skill && domainDown) {
      return { status: 'error', content: `${parsed.skill}: unavailable: ${domainDown}` };
    }
    if (!skill) {
      const invalid = invalidSkills(snapshot).get(parsed.skill);
      if (invalid) {
        return {
          status: 'error',
          content: `${parsed.skill}: invalid: ${invalid.reason}. Its file ${invalid.path} must be fixed first (steward skills validate shows every problem).`,
          metadata: { invalid: 'skill_file' },
        };
      }
      const closest = closestSkills(snapshot, parsed.skill, 3);
      const hint = closest.length ? ` Did you mean: ${closest.join(', ')}?` : '';
      return {
        status: 'error',
        content: `Unknown skill "${parsed.skill}".${hint} Use get_skill to list domains, or get_skill --search "words".`,
      };
    }
    if (parsed.help) return asHelp(skillHelp(snapshot, skill.name));
    if (await isSkillDisabled(this.#options.database, request.user.id, skill.name)) {
      return {
        status: 'error',
        content: `${skill.name} is turned off for this user (on the dashboard's Skills page). Tell the user; they or the owner can turn it on there.`,
        metadata: { refused: 'disabled' },
      };
    }

    const scopeProblem = (this.#options.scopeCheck ?? defaultScopeCheck)(skill, request.caller);
    if (scopeProblem) {
      return { status: 'error', content: `Refused: ${scopeProblem}`, metadata: { refused: 'scope' } };
    }

    const handler = this.#options.handlers.get(skill.handler);
    if (!handler) {
      // A template skill (a workflow): its body is the instructions to follow, and the flags
      // it takes are the ones its `## Flags` section documents.
      const flagProblem = templateFlagProblem(skill.name, skill.body, parsed.flags);
      if (flagProblem) return { status: 'error', content: flagProblem };
      return {
        status: 'ok',
        content: `Instructions for ${skill.name} — follow them step by step with the skills they name:\n\n${skill.body.trim()}`,
        metadata: { template: true },
      };
    }

    const unavailable = (await this.#unavailable(request.user.id)).find(
      (entry) => entry.domain === skill.domain,
    );
    if (unavailable) {
      return {
        status: 'error',
        content: `${skill.name} is not available: ${unavailable.reason}`,
        metadata: { unavailable: skill.domain },
      };
    }

    if (parsed.positionals.length > 0) {
      return {
        status: 'error',
        content: `${skill.name} takes flags only, but got "${parsed.positionals.join(' ')}". Write values as --flag value (quote text with spaces). See \`${skill.name} --help\`.`,
      };
    }
    const flags = handler.flags.safeParse(parsed.flags);
    if (!flags.success) {
      return { status: 'error', content: describeFlagErrors(skill.name, handler.flags, flags.error) };
    }

    const breakerKeys = [skill.name, userBreakerKey(skill.name, request.user.id)];
    /** The breakers a success must reset: those with a failure on record (two writes per call spared). */
    const toReset: string[] = [];
    for (const key of breakerKeys) {
      const breaker = await this.#breakers.check(key);
      if (breaker.allowed && !breaker.clean) toReset.push(key);
      if (!breaker.allowed) {
        const seconds = Math.ceil(breaker.retryInMs / 1000);
        return {
          status: 'error',
          content: `${skill.name} is paused after repeated failures (circuit breaker open). Try again in ${seconds} s, or tell the user it is unavailable.`,
          metadata: { circuit: 'open' },
        };
      }
    }

    const signal = request.signal ?? new AbortController().signal;
    // From here on the call is an effect the user is told about (done, failed or unknown).
    if (!skill.readonly) call.receipt = receiptDetailFromFlags(parsed.flags);
    const tainted =
      !skill.readonly && request.turnId !== null && request.turnId !== undefined
        ? this.#taintedTurns.has(request.turnId)
        : false;
    if ((skill.confirm || tainted) && !request.confirmed && this.#options.sentinel) {
      const refusal = await this.#review(skill, request, executionId, signal);
      if (refusal) return refusal;
    }

    try {
      await startSkillCall(
        this.#options.database,
        record(request, executionId, parsed, call.receipt),
        started,
      );
      call.recordedRunning = true;
    } catch (error) {
      this.#options.logger.error({ err: error, skill: skill.name }, 'could not record a skill call');
      return {
        status: 'error',
        content: `${skill.name} was not run: its call could not be recorded (${errorMessage(error)}). Try again shortly.`,
      };
    }
    const outcome = await invokeHandler(
      {
        defaultTimeoutMs: this.#options.defaultTimeoutMs,
        services: this.#options.services,
        logger: this.#options.logger,
        now: this.#now,
      },
      skill,
      handler,
      flags.data,
      request,
      executionId,
      signal,
    );
    if (outcome.failure === null) {
      for (const key of toReset) await this.#breakers.recordSuccess(key);
    } else if (outcome.failure.kind === 'infrastructure') {
      await this.#breakers.recordFailure(skill.name, outcome.failure.message);
    } else if (outcome.failure.kind === 'unexpected') {
      await this.#breakers.recordFailure(breakerKeys[1]!, outcome.failure.message);
    }
    return outcome.result;
  }

  /** Asks the sentinel; stores its decision; returns the refusal result, or null when approved. */
  async #review(
    skill: SkillDefinition,
    request: ExecuteRequest,
    executionId: string,
    signal: AbortSignal,
  ): Promise<SkillResult | null> {
    const reviewStarted = this.#now();
    const reviewStartedMs = performance.now();
    // What the turn read from outside never reaches the sentinel, not even copied into a command.
    const quotes = request.turnId ? this.#taintedTurns.get(request.turnId) : undefined;
    const redact = (text: string) => (quotes ? quotes.redact(text) : text);
    const decision = await this.#options.sentinel!.review({
      originalRequest: request.originalRequest ?? '',
      mission: request.caller.kind === 'agent' ? redact(request.caller.mission) : null,
      command: redact(request.command),
      skill,
      userId: request.user.id,
      turnId: request.turnId ?? null,
      executionId,
      signal,
    });
    await recordSentinelDecision(this.#options.database, {
      executionId,
      turnId: request.turnId ?? null,
      userId: request.user.id,
      skill: skill.name,
      command: request.command,
      mission: request.caller.kind === 'agent' ? request.caller.mission : null,
      originalRequest: request.originalRequest ?? null,
      decision,
    });
    this.#options.onSentinelDecision?.({
      executionId,
      turnId: request.turnId ?? null,
      skill: skill.name,
      command: request.command,
      approved: decision.approved,
      reasoning: decision.reasoning,
      agentId: request.caller.kind === 'agent' ? request.caller.agentId : null,
      userId: request.user.id,
      model: decision.model ?? null,
      startedAt: reviewStarted,
      durationMs: Math.round(performance.now() - reviewStartedMs),
    });
    if (decision.approved) return null;
    return {
      status: 'error',
      content: `Not done: the safety check stopped ${skill.name} (${decision.reasoning}). Do not retry it; report that it needs the user's confirmation.`,
      metadata: { refused: 'sentinel', reasoning: decision.reasoning, command: request.command },
    };
  }

  async #unavailable(userId: string): Promise<readonly UnavailableDomain[]> {
    if (!this.#options.unavailableDomains) return [];
    try {
      return await this.#options.unavailableDomains(userId);
    } catch (error) {
      // Availability is advice: when it cannot be computed, the handler reports the real problem.
      this.#options.logger.warn({ err: error }, 'could not compute unavailable skill domains');
      return [];
    }
  }

  #truncate(result: SkillResult): SkillResult {
    const max = this.#options.maxResultChars ?? 8_000;
    if (result.content.length <= max) return result;
    const hidden = result.content.length - max;
    return {
      ...result,
      content: cutFenced(
        result.content,
        max,
        `\n…[truncated: ${hidden} more characters not shown. Narrow the request (filters, --limit) to see the rest.]`,
      ),
      metadata: { ...result.metadata, truncated: hidden },
    };
  }

  /** Records how the call ended; returns the status recorded. */
  async #log(
    request: ExecuteRequest,
    executionId: string,
    call: CallState,
    result: SkillResult,
    started: Date,
    durationMs: number,
  ): Promise<ExecutionOutcome['callStatus']> {
    const refused = result.metadata?.refused !== undefined;
    const stopped = result.metadata?.timeout === true || result.metadata?.cancelled === true;
    const end: SkillCallEnd = {
      // A mutating handler stopped half-way may have done its work: that is unknown, not an error.
      status: refused
        ? 'refused'
        : stopped && call.receipt !== null
          ? 'unknown'
          : result.metadata?.timeout === true
            ? 'timeout'
            : result.status,
      result: result.status === 'ok' ? result.content : null,
      error: result.status === 'error' ? result.content : null,
      durationMs,
      receipt: result.receipt?.trim() ? oneLine(result.receipt, 120) : null,
    };
    try {
      if (call.recordedRunning) await finishSkillCall(this.#options.database, executionId, started, end);
      else
        await recordSkillCall(
          this.#options.database,
          record(request, executionId, call.parsed, call.receipt),
          started,
          end,
        );
    } catch (error) {
      this.#options.logger.error({ err: error }, 'could not record a skill execution');
    }
    return end.status;
  }
}

type CallState = {
  parsed: ParsedCommand | null;
  recordedRunning: boolean;
  /** Set once a mutating call passed its checks: the identifying detail of its receipt. */
  receipt: string | null;
};

/** Steward's own pages (get_skill, --help): marked so agents never fence them as outside data. */
function asHelp(result: SkillResult): SkillResult {
  return { ...result, metadata: { ...result.metadata, help: true } };
}

/** Breaker key for failures one user's calls cause (`#` cannot appear in a user id). */
export function userBreakerKey(skill: string, userId: string): string {
  return `${skill}#${userId}`;
}

function record(
  request: ExecuteRequest,
  executionId: string,
  parsed: ParsedCommand | null,
  receipt: string | null,
): ExecutionRecord {
  return {
    id: executionId,
    parentId: request.caller.kind === 'agent' ? request.caller.parentExecutionId : null,
    turnId: request.turnId ?? null,
    userId: request.user.id,
    conversationId: request.conversationId ?? null,
    agentId: request.caller.kind === 'agent' ? request.caller.agentId : null,
    mission: request.caller.kind === 'agent' ? request.caller.mission : null,
    skill: parsed?.skill ?? null,
    command: request.command,
    flags: parsed ? parsed.flags : null,
    receipt,
  };
}
