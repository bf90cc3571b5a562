import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { TurnEvent, TurnRef } from '../agents/index.ts';
import type { LlmCallRecord, Usage } from '../llm/index.ts';
import type { SentinelDecisionEvent } from '../skills/index.ts';

type OpenTurn = { span: Span; context: Context; agents: Map<string, { span: Span; context: Context }> };

/** Turns whose span context is kept for linking their compaction trace. */
const RECENT_TURNS = 1_000;
const MAX_OPEN_TURNS = 10_000;

/** GenAI semantic-convention attributes of one model call. */
function llmAttributes(role: string, model: string, usage: Usage): Attributes {
  return {
    'gen_ai.operation.name': role === 'embeddings' ? 'embeddings' : 'chat',
    'gen_ai.request.model': model,
    'gen_ai.response.model': model,
    'gen_ai.usage.input_tokens': usage.promptTokens,
    'gen_ai.usage.output_tokens': usage.completionTokens,
    'gen_ai.usage.cache_read.input_tokens': usage.cachedTokens,
    'steward.llm.role': role,
    'steward.llm.cost_usd': usage.cost,
  };
}

/**
 * Builds one trace per turn from its events, with explicit start and end times, so the engine
 * holds no tracing code: the turn span is the root; orchestrator LLM calls, sub-agents, direct
 * skill calls and sentinel reviews are its children; a sub-agent's LLM and skill calls are the
 * agent's children. Failed LLM attempts come from the usage recorder; compaction gets its own
 * trace, linked to the turn it folded. Span attributes never hold message text or commands.
 */
export class TurnSpans {
  readonly #tracer: Tracer;
  readonly #now: () => number;
  readonly #open = new Map<string, OpenTurn>();
  readonly #recent = new Map<string, SpanContext>();

  constructor(tracer: Tracer, now: () => number = Date.now) {
    this.#tracer = tracer;
    this.#now = now;
  }

  turnEvent(event: TurnEvent, turn: TurnRef): void {
    if (event.type === 'turn_start') {
      this.#startTurn(event, turn);
      return;
    }
    const open = this.#open.get(turn.turnId);
    if (!open) return;
    const now = this.#now();
    switch (event.type) {
      case 'llm_call': {
        const parent = (event.agentId && open.agents.get(event.agentId)?.context) || open.context;
        this.#timed(
          `chat ${event.model}`,
          parent,
          now - event.latencyMs,
          now,
          llmAttributes(event.role, event.model, event.usage),
          SpanKind.CLIENT,
        );
        return;
      }
      case 'agent_start': {
        const span = this.#tracer.startSpan(
          `invoke_agent ${event.agentId}`,
          {
            startTime: now,
            attributes: {
              'gen_ai.operation.name': 'invoke_agent',
              'gen_ai.agent.name': event.agentId,
              'steward.agent.wave': event.wave,
            },
          },
          open.context,
        );
        open.agents.set(event.agentId, { span, context: trace.setSpan(open.context, span) });
        return;
      }
      case 'agent_end': {
        const agent = open.agents.get(event.agentId);
        const span =
          agent?.span ??
          this.#tracer.startSpan(
            `invoke_agent ${event.agentId}`,
            {
              startTime: now,
              attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': event.agentId },
            },
            open.context,
          );
        span.setAttribute('steward.agent.status', event.status);
        if (event.status === 'failed' || event.status === 'timeout') {
          span.setStatus({ code: SpanStatusCode.ERROR, message: event.status });
        }
        span.end(now);
        open.agents.delete(event.agentId);
        return;
      }
      case 'skill_call_end': {
        const parent = (event.agentId && open.agents.get(event.agentId)?.context) || open.context;
        const skill = event.skill ?? 'unparsed';
        const span = this.#timed(`execute_tool ${skill}`, parent, now - event.durationMs, null, {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': skill,
          'steward.execution.id': event.executionId,
          'steward.skill.status': event.status,
        });
        if (event.status === 'error') span.setStatus({ code: SpanStatusCode.ERROR });
        span.end(now);
        return;
      }
      case 'limit':
        open.span.addEvent('limit', { 'steward.limit': event.limit }, now);
        return;
      case 'turn_end':
        this.#endTurn(open, event, turn.turnId, now);
        return;
      default:
    }
  }

  /** A sentinel review (the executor's hook): a span under the calling agent, or the turn. */
  sentinelDecision(decision: SentinelDecisionEvent): void {
    const open = decision.turnId ? this.#open.get(decision.turnId) : undefined;
    if (!open) return;
    const parent = (decision.agentId && open.agents.get(decision.agentId)?.context) || open.context;
    const started = decision.startedAt.getTime();
    const span = this.#timed(`sentinel ${decision.skill}`, parent, started, null, {
      'gen_ai.operation.name': 'chat',
      ...(decision.model ? { 'gen_ai.request.model': decision.model } : {}),
      'gen_ai.tool.name': decision.skill,
      'steward.execution.id': decision.executionId,
      'steward.sentinel.approved': decision.approved,
    });
    span.end(started + decision.durationMs);
  }

  /**
   * Every LLM attempt (the usage recorder). Successful turn calls arrive as `llm_call` events;
   * this adds the failed attempts to their turn, and makes each compaction call its own trace
   * linked to the turn it folded.
   */
  llmCall(record: LlmCallRecord): void {
    const now = this.#now();
    const started = now - record.latencyMs;
    const attributes = llmAttributes(record.role, record.model, record.usage);
    if (record.role === 'compaction') {
      const turnContext = record.turnId ? this.#recent.get(record.turnId) : undefined;
      const root = this.#tracer.startSpan('compaction', {
        startTime: started,
        root: true,
        attributes: {
          'steward.turn.id': record.turnId ?? '',
          'steward.conversation.id': record.conversationId ?? '',
        },
        links: turnContext
          ? [{ context: turnContext, attributes: { 'steward.link': 'compacted_turn' } }]
          : [],
      });
      const call = this.#timed(
        `chat ${record.model}`,
        trace.setSpan(ROOT_CONTEXT, root),
        started,
        null,
        attributes,
        SpanKind.CLIENT,
      );
      this.#fail(call, record);
      call.end(now);
      this.#fail(root, record);
      root.end(now);
      return;
    }
    if (!record.errorClass || !record.turnId) return;
    const open = this.#open.get(record.turnId);
    if (!open) return;
    const span = this.#timed(
      `chat ${record.model}`,
      open.context,
      started,
      null,
      attributes,
      SpanKind.CLIENT,
    );
    this.#fail(span, record);
    span.end(now);
  }

  #startTurn(event: Extract<TurnEvent, { type: 'turn_start' }>, turn: TurnRef): void {
    if (this.#open.size >= MAX_OPEN_TURNS) this.#open.clear();
    const span = this.#tracer.startSpan('turn', {
      root: true,
      startTime: this.#now(),
      kind: SpanKind.SERVER,
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'steward',
        'steward.turn.id': event.turnId,
        'steward.conversation.id': event.conversationId,
        'steward.user.id': turn.userId,
        'steward.channel': turn.channel,
        'steward.mode': event.mode,
        'steward.resumed': event.resumed,
      },
    });
    this.#open.set(turn.turnId, { span, context: trace.setSpan(ROOT_CONTEXT, span), agents: new Map() });
  }

  #endTurn(
    open: OpenTurn,
    event: Extract<TurnEvent, { type: 'turn_end' }>,
    turnId: string,
    now: number,
  ): void {
    for (const agent of open.agents.values()) agent.span.end(now);
    open.span.setAttributes({
      'steward.turn.status': event.status,
      'gen_ai.usage.input_tokens': event.usage.promptTokens,
      'gen_ai.usage.output_tokens': event.usage.completionTokens,
      'gen_ai.usage.cache_read.input_tokens': event.usage.cachedTokens,
      'steward.llm.cost_usd': event.usage.cost,
    });
    if (event.status === 'failed')
      open.span.setStatus({ code: SpanStatusCode.ERROR, message: 'turn failed' });
    open.span.end(now);
    this.#open.delete(turnId);
    this.#recent.set(turnId, open.span.spanContext());
    if (this.#recent.size > RECENT_TURNS) this.#recent.delete(this.#recent.keys().next().value!);
  }

  #timed(
    name: string,
    parent: Context,
    startTime: number,
    endTime: number | null,
    attributes: Attributes,
    kind: SpanKind = SpanKind.INTERNAL,
  ): Span {
    const span = this.#tracer.startSpan(name, { startTime, attributes, kind }, parent);
    if (endTime !== null) span.end(endTime);
    return span;
  }

  #fail(span: Span, record: LlmCallRecord): void {
    if (!record.errorClass) return;
    span.setAttribute('error.type', record.errorClass);
    span.setStatus({ code: SpanStatusCode.ERROR, message: record.errorClass });
  }
}
