import type { Database } from '../db/index.ts';
import { llmCallsOfTurn } from '../llm/index.ts';
import { type ExecutionRow, executionsOfTurn, sentinelDecisionsOfTurn } from '../skills/index.ts';
import { receiptsFromJson, receiptsJson } from './receipts.ts';
import { getTurn } from './turns.ts';

const skillCall = (row: ExecutionRow) => ({
  id: row.id,
  skill: row.skill,
  command: row.command,
  status: row.status,
  result: row.result,
  error: row.error,
  startedAt: row.startedAt,
  durationMs: row.durationMs,
});

type Json = string | number | boolean | null | Date | Json[] | { [key: string]: Json };

/** Every object key of `value`, deep, in snake_case (the API's one key style for traces). */
function snakeKeys(value: unknown): Json {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [
        key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`),
        snakeKeys(inner),
      ]),
    );
  }
  return value as Json;
}

/**
 * Everything that happened in a turn, every key in snake_case: the turn, every LLM call with its
 * usage, agents with their dependencies and skill calls, the orchestrator's own skill calls,
 * and each sentinel decision with its reasoning. Null for an unknown turn.
 */
export async function turnTrace(database: Database, turnId: string) {
  const turn = await getTurn(database, turnId);
  if (!turn) return null;
  const [calls, executions, decisions] = await Promise.all([
    llmCallsOfTurn(database, turnId),
    executionsOfTurn(database, turnId),
    sentinelDecisionsOfTurn(database, turnId),
  ]);
  const agents = executions
    .filter((row) => row.kind === 'agent')
    .map((row) => ({
      id: row.id,
      agentId: row.agentId,
      mission: row.mission,
      dependsOn: row.dependsOn,
      status: row.status,
      result: row.result,
      error: row.error,
      usage: row.usage,
      startedAt: row.startedAt,
      finishedAt: row.finishedAt,
      durationMs: row.durationMs,
      skillCalls: executions.filter((child) => child.parentId === row.id).map(skillCall),
    }));
  const usage = calls.reduce(
    (total, call) => ({
      promptTokens: total.promptTokens + call.promptTokens,
      cachedTokens: total.cachedTokens + call.cachedTokens,
      cacheWriteTokens: total.cacheWriteTokens + call.cacheWriteTokens,
      completionTokens: total.completionTokens + call.completionTokens,
      cost: total.cost + call.cost,
    }),
    { promptTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, completionTokens: 0, cost: 0 },
  );
  const trace = {
    turn: {
      id: turn.id,
      conversationId: turn.conversationId,
      userId: turn.userId,
      status: turn.status,
      mode: turn.mode,
      request: turn.request,
      reply: turn.reply,
      startedAt: turn.startedAt,
      finishedAt: turn.finishedAt,
      stopReason: turn.stopReason,
      error: turn.error,
      /** `{skill, status, summary, execution_id}` per effect, as the turn ended with them. */
      receipts: receiptsJson(receiptsFromJson(turn.receipts)),
    },
    orchestratorCalls: calls.filter((call) => call.role === 'orchestrator'),
    llmCalls: calls,
    agents,
    directSkillCalls: executions
      .filter((row) => row.kind === 'skill' && row.parentId === null)
      .map(skillCall),
    sentinelDecisions: decisions,
    usage,
  };
  return snakeKeys(trace) as SnakeCased<typeof trace>;
}

type Snake<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${Snake<Tail>}`
  : S;
/** `T` with every object key, deep, in snake_case. */
type SnakeCased<T> = T extends Date
  ? T
  : T extends readonly (infer Item)[]
    ? SnakeCased<Item>[]
    : T extends object
      ? { [K in keyof T as K extends string ? Snake<K> : K]: SnakeCased<T[K]> }
      : T;

export type TurnTrace = NonNullable<Awaited<ReturnType<typeof turnTrace>>>;
