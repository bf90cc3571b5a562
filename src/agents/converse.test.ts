import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/db.ts';
import { RefusedError } from '../errors.ts';
import { emptyUsage } from '../llm/index.ts';
import { findLatestConversation } from '../memory/index.ts';
import { ensureUser } from '../users/index.ts';
import { type ConverseDeps, converse, turnOutcome } from './converse.ts';
import type { TurnEvent } from './events.ts';
import type { TurnInput, TurnOutcome } from './turn-engine.ts';

/** An engine that records what it was asked and emits a start, two deltas and an end. */
function recordingEngine() {
  const inputs: TurnInput[] = [];
  const engine: ConverseDeps['engine'] = {
    async handle(input) {
      inputs.push(input);
      const emit = input.emit ?? (() => {});
      emit({ type: 'turn_start', turnId: 't1', conversationId: 'c1', mode: 'direct', resumed: false });
      emit({ type: 'text_delta', text: 'hel' });
      emit({ type: 'text_delta', text: 'lo' });
      const outcome: TurnOutcome = {
        reply: 'hello',
        conversationId: 'c1',
        turnId: 't1',
        status: 'completed',
        usage: emptyUsage(),
        duplicate: false,
        receipts: [],
      };
      emit({
        type: 'turn_end',
        turnId: 't1',
        status: 'completed',
        reply: 'hello',
        usage: emptyUsage(),
        receipts: [],
      });
      return outcome;
    },
  };
  return { engine, inputs };
}

describe('converse', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('pglite');
    await ensureUser(db.database, 'ann');
  });
  afterAll(() => db.drop());

  it('streams only the events the surface selects, in order, and ends with the outcome', async () => {
    const { engine, inputs } = recordingEngine();
    const exchange = await converse(
      { engine, database: db.database },
      {
        userId: 'ann',
        surface: 'api',
        text: 'hi',
        options: { stream: (event) => event.type === 'text_delta', receipts: 'data' },
      },
    );
    const seen: TurnEvent[] = [];
    for await (const event of exchange.events) seen.push(event);
    expect(seen.map((event) => (event.type === 'text_delta' ? event.text : event.type))).toEqual([
      'hel',
      'lo',
    ]);
    expect((await turnOutcome(exchange)).reply).toBe('hello');
    expect(inputs[0]).toMatchObject({ userId: 'ann', channel: 'api', text: 'hi', receipts: 'data' });
  });

  it('refuses over the rate limit before the engine sees the message, unless already admitted', async () => {
    const { engine, inputs } = recordingEngine();
    const rateLimit = {
      check: async () => {
        throw new RefusedError('rate_limited', 'too many', { retryAfterSeconds: 7 });
      },
    };
    const refused = await converse(
      { engine, database: db.database, rateLimit },
      {
        userId: 'ann',
        surface: 'api',
        text: 'hi',
      },
    ).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RefusedError);
    expect(refused).toMatchObject({ status: 429, label: 'rate_limited', retryAfterSeconds: 7 });
    expect(inputs).toEqual([]);
    const admitted = await converse(
      { engine, database: db.database, rateLimit },
      { userId: 'ann', surface: 'telegram', text: 'hi', options: { admitted: true } },
    );
    expect((await turnOutcome(admitted)).reply).toBe('hello');
  });

  it('takes /new as a command only where the surface asks: alone it starts a conversation, with text it asks there', async () => {
    const { engine, inputs } = recordingEngine();
    const deps = { engine, database: db.database };
    const alone = await converse(deps, {
      userId: 'ann',
      surface: 'web',
      text: ' /new ',
      options: { commands: true },
    });
    const started = await alone.result;
    expect(started.kind).toBe('new_conversation');
    // Its event stream is empty and over, so a surface reading it goes on to the result.
    const events: unknown[] = [];
    for await (const event of alone.events) events.push(event);
    expect(events).toEqual([]);
    expect(inputs).toEqual([]);
    const latest = await findLatestConversation(db.database, 'ann', 'web');
    expect(started.kind === 'new_conversation' && started.conversationId).toBe(latest?.id);

    await turnOutcome(
      await converse(deps, {
        userId: 'ann',
        surface: 'telegram',
        text: '/new@steward_bot what is on today?',
        options: { commands: true, conversationId: 'old' },
      }),
    );
    expect(inputs[0]).toMatchObject({
      text: 'what is on today?',
      newConversation: true,
      conversationId: undefined,
    });

    await turnOutcome(await converse(deps, { userId: 'ann', surface: 'api', text: '/new' }));
    expect(inputs[1]).toMatchObject({ text: '/new' });
  });
});
