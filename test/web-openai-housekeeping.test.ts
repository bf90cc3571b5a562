import OpenAI from 'openai';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { housekeepingKind } from '../src/web/openai-housekeeping.ts';
import { backends } from './support/db.ts';
import { type FakeRequest, useFakeLlm } from './support/fake-llm.ts';
import { CHORES } from './support/fixtures/chat-clients/chores.ts';
import { OWNER_TOKEN, useWebSteward } from './support/web.ts';

/*
 * Chat clients' housekeeping requests (titles, tags, follow-ups, autocompletion) on
 * /v1/chat/completions are answered by the model alone: no turn, no conversation, no
 * skills, no memory — even when the model would create a task.
 */

const TITLE = '{ "title": "Harbour Report Task" }';

for (const backend of backends()) {
  describe(`housekeeping requests on /v1/chat/completions [${backend}]`, () => {
    const fake = useFakeLlm();
    const steward = useWebSteward(backend, fake);
    let client: OpenAI;
    const seen: FakeRequest[] = [];
    beforeAll(() => {
      client = new OpenAI({ apiKey: OWNER_TOKEN, baseURL: `${steward.url}/v1`, maxRetries: 0 });
    });
    afterEach(() => {
      seen.length = 0;
    });

    /** A model that answers with the title and, given the chance, creates a task. */
    const eagerModel = () =>
      fake.respondWith((request) => {
        seen.push(request);
        return {
          text: TITLE,
          toolCalls: [
            {
              name: 'dispatch_agent',
              arguments: { agent_id: 'maker', mission: 'Create the task "Chore"', skills: ['tasks.create'] },
            },
          ],
        };
      });

    const counts = async () => {
      const [row] = await steward.runtime.database.query<Record<string, number>>(
        `SELECT (SELECT count(*)::int FROM turns) AS turns,
                (SELECT count(*)::int FROM conversations) AS conversations,
                (SELECT count(*)::int FROM messages) AS messages,
                (SELECT count(*)::int FROM tasks) AS tasks,
                (SELECT count(*)::int FROM skill_executions) AS executions`,
      );
      return row;
    };

    for (const [client_, messages] of Object.entries(CHORES)) {
      it(`${client_}: a plain completion, nothing stored, no task`, async () => {
        expect(housekeepingKind(messages)).not.toBeNull();
        eagerModel();
        const before = await counts();
        const completion = await client.chat.completions.create({
          model: 'steward',
          messages,
          user: 'chat-1',
        });
        expect(completion.choices[0]?.message.content).toBe(TITLE);
        expect(completion.usage?.total_tokens).toBeGreaterThan(0);
        expect(await counts()).toEqual(before);
        // The model saw the client's messages only: no Steward prompt, no tools, no memory.
        expect(seen).toHaveLength(1);
        expect(seen[0]!.body.tools).toBeUndefined();
        expect(seen[0]!.body.messages).toEqual(messages);
      });
    }

    it('streams a chore as chunks with its usage, still storing nothing', async () => {
      eagerModel();
      const before = await counts();
      const stream = await client.chat.completions.create({
        model: 'steward',
        messages: CHORES['Open WebUI tags']!,
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe(TITLE);
      expect(chunks.at(-1)?.usage?.total_tokens).toBeGreaterThan(0);
      expect(await counts()).toEqual(before);
    });

    it('still runs a message that only mentions a title as a turn', async () => {
      fake.respondWith((request) => {
        seen.push(request);
        return { text: 'Sure.' };
      });
      const before = await counts();
      await client.chat.completions.create({
        model: 'steward',
        messages: [{ role: 'user', content: 'Generate a concise title for my essay about harbours' }],
        user: 'chat-2',
      });
      const after = await counts();
      expect(after!.turns).toBe(before!.turns! + 1);
      expect(seen[0]!.body.tools?.length).toBeGreaterThan(0);
    });
  });
}
