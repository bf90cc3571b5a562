import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApiToken, ensureUser } from '../src/users/index.ts';
import { openAiConversationId } from '../src/web/index.ts';
import { createTaskScript, reply, scriptModels } from './support/agent-scripts.ts';
import { backends } from './support/db.ts';
import { useFakeLlm } from './support/fake-llm.ts';
import { OWNER_TOKEN, useWebSteward } from './support/web.ts';

/*
 * `/v1/models` and `/v1/chat/completions` through the `openai` npm client: a completion, a
 * stream with its usage chunk, OpenAI's error shapes, and Steward's own history per
 * (token user, `user` field).
 */

for (const backend of backends()) {
  describe(`OpenAI-compatible API [${backend}]`, () => {
    const fake = useFakeLlm();
    const steward = useWebSteward(backend, fake);
    let client: OpenAI;
    beforeAll(() => {
      client = new OpenAI({ apiKey: OWNER_TOKEN, baseURL: `${steward.url}/v1`, maxRetries: 0 });
    });

    it('lists the model steward', async () => {
      const models = await client.models.list();
      expect(models.data.map((model) => model.id)).toEqual(['steward']);
    });

    it('answers a completion from the last user message only, with usage', async () => {
      const models = scriptModels(fake, { orchestrator: [reply('Hello from Steward.')] });
      const completion = await client.chat.completions.create({
        model: 'steward',
        messages: [
          { role: 'system', content: 'You are a pirate.' },
          { role: 'user', content: 'an old question the client replays' },
          { role: 'assistant', content: 'an old answer' },
          { role: 'user', content: 'Say hello' },
        ],
        user: 'chat-1',
      });
      models.assertDone();
      expect(completion.object).toBe('chat.completion');
      expect(completion.model).toBe('steward');
      expect(completion.choices[0]?.message).toMatchObject({
        role: 'assistant',
        content: 'Hello from Steward.',
      });
      expect(completion.choices[0]?.finish_reason).toBe('stop');
      expect(completion.usage?.prompt_tokens).toBeGreaterThan(0);
      expect(completion.usage?.total_tokens).toBe(
        (completion.usage?.prompt_tokens ?? 0) + (completion.usage?.completion_tokens ?? 0),
      );
      // Only the last user message reached the model; the client's replayed history did not.
      const shown = JSON.stringify(models.orchestratorRequests()[0]?.body.messages);
      expect(shown).toContain('Say hello');
      expect(shown).not.toContain('an old question the client replays');
      expect(shown).not.toContain('You are a pirate.');
    });

    it('streams the reply as content deltas, then a usage chunk when asked', async () => {
      const models = scriptModels(fake, {
        orchestrator: [reply('One two three four.', { chunkDelayMs: 5 })],
      });
      const stream = await client.chat.completions.create({
        model: 'steward',
        messages: [{ role: 'user', content: 'Count to four' }],
        stream: true,
        stream_options: { include_usage: true },
        user: 'chat-stream',
      });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      models.assertDone();
      const content = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
      expect(content).toBe('One two three four.');
      expect(chunks.filter((chunk) => chunk.choices[0]?.delta?.content).length).toBeGreaterThan(1);
      expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk')).toBe(true);
      expect(chunks.some((chunk) => chunk.choices[0]?.finish_reason === 'stop')).toBe(true);
      const last = chunks.at(-1)!;
      expect(last.choices).toEqual([]);
      expect(last.usage?.prompt_tokens).toBeGreaterThan(0);
    });

    it('streams without a usage chunk unless include_usage is set', async () => {
      const models = scriptModels(fake, { orchestrator: [reply('Plain.')] });
      const stream = await client.chat.completions.create({
        model: 'steward',
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
      });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      models.assertDone();
      expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe('Plain.');
      expect(chunks.some((chunk) => chunk.usage)).toBe(false);
    });

    it('carries receipts as data beside the choices, never as lines in the content', async () => {
      let models = scriptModels(fake, createTaskScript('Call mum'));
      const completion = (await client.chat.completions.create({
        model: 'steward',
        messages: [{ role: 'user', content: 'Add a task to call mum' }],
        user: 'chat-receipts',
      })) as OpenAI.ChatCompletion & { receipts?: unknown };
      models.assertDone();
      expect(completion.choices[0]?.message.content).toBe('Added "Call mum".');
      expect(completion.receipts).toEqual([
        {
          skill: 'tasks.create',
          status: 'done',
          summary: expect.stringMatching(/^Call mum \(t_[a-z0-9]+\)$/),
          execution_id: expect.any(String),
        },
      ]);

      models = scriptModels(fake, createTaskScript('Call dad'));
      const stream = await client.chat.completions.create({
        model: 'steward',
        messages: [{ role: 'user', content: 'Add a task to call dad' }],
        stream: true,
        user: 'chat-receipts',
      });
      const chunks: Array<OpenAI.ChatCompletionChunk & { receipts?: unknown }> = [];
      for await (const chunk of stream) chunks.push(chunk);
      models.assertDone();
      expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe(
        'Added "Call dad".',
      );
      const stop = chunks.find((chunk) => chunk.choices[0]?.finish_reason === 'stop')!;
      expect(stop.receipts).toEqual([expect.objectContaining({ skill: 'tasks.create', status: 'done' })]);
    });

    it('keeps one conversation per (token user, user field) and a separate one per field', async () => {
      const models = scriptModels(fake, {
        orchestrator: [reply('First in A.'), reply('Second in A.'), reply('First in B.')],
      });
      const send = (user: string, content: string) =>
        client.chat.completions.create({ model: 'steward', messages: [{ role: 'user', content }], user });
      await send('conv-a', 'Remember the word PELICAN');
      await send('conv-a', 'What word?');
      await send('conv-b', 'What word?');
      models.assertDone();
      const [, second, third] = models.orchestratorRequests();
      expect(JSON.stringify(second?.body.messages)).toContain('PELICAN');
      expect(JSON.stringify(third?.body.messages)).not.toContain('PELICAN');
      // A user token's conversations are its own, even under the same `user` field.
      expect(openAiConversationId('local', 'conv-a')).not.toBe(openAiConversationId('someone', 'conv-a'));
    });

    it('answers OpenAI error shapes: unknown model 404, bad key 401, no user message 400', async () => {
      const unknown = await client.chat.completions
        .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })
        .catch((error: unknown) => error);
      expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
      expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');

      const stranger = new OpenAI({
        apiKey: 'stw_not-a-real-token',
        baseURL: `${steward.url}/v1`,
        maxRetries: 0,
      });
      const refused = await stranger.models.list().catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.AuthenticationError);
      expect((refused as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe('invalid_api_key');

      const raw = await fetch(`${steward.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${OWNER_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'steward', messages: [{ role: 'system', content: 'only system' }] }),
      });
      expect(raw.status).toBe(400);
      const body = (await raw.json()) as { error: { message: string; type: string; code: string } };
      expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_messages' });
      expect(body.error.message).toContain("role 'user'");

      const noKey = await fetch(`${steward.url}/v1/models`);
      expect(noKey.status).toBe(401);
      expect(((await noKey.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');
    });

    it('runs a per-user token as its own user', async () => {
      await ensureUser(steward.runtime.database, 'alice');
      const { token } = await createApiToken(steward.runtime.database, 'alice');
      const alice = new OpenAI({ apiKey: token, baseURL: `${steward.url}/v1`, maxRetries: 0 });
      const models = scriptModels(fake, { orchestrator: [reply('Hi Alice.')] });
      const completion = await alice.chat.completions.create({
        model: 'steward',
        messages: [{ role: 'user', content: 'Hello' }],
        user: 'x',
      });
      models.assertDone();
      expect(completion.choices[0]?.message.content).toBe('Hi Alice.');
      const rows = await steward.runtime.database.query<{ user_id: string }>(
        "SELECT user_id FROM turns WHERE request = 'Hello'",
      );
      expect(rows.map((row) => row.user_id)).toEqual(['alice']);
    });
  });
}
