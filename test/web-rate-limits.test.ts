import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { loginAs, OWNER_TOKEN, startWebSteward, type WebSteward } from './support/web.ts';

/*
 * The inbound limit per user holds on every way in over HTTP: the OpenAI-compatible API and
 * the dashboard chat (form and stream) count against the same per-minute budget as
 * POST /api/chat, and a refused message is never stored.
 */

/** Counters are per minute: start early in a minute so the test never straddles two. */
async function startOfAMinute(): Promise<void> {
  const second = new Date().getSeconds();
  if (second > 40) await new Promise((resolve) => setTimeout(resolve, (61 - second) * 1000));
}

for (const backend of backends()) {
  describe(`inbound limits on the dashboard and /v1 [${backend}]`, { timeout: 120_000 }, () => {
    let fake: FakeLlm;
    let steward: WebSteward;
    beforeAll(async () => {
      fake = await startFakeLlm();
      fake.respondWith(() => ({ text: 'ok' }));
      steward = await startWebSteward(backend, fake, {
        extraYaml: 'limits: { inbound_per_user_per_minute: 2, inbound_per_channel_per_minute: 0 }\n',
      });
    }, 120_000);
    afterAll(async () => {
      await steward?.stop();
      await fake?.close();
    });

    it('refuses the third message in a minute from one user, whichever way it comes in', async () => {
      await startOfAMinute();
      const client = new OpenAI({ apiKey: OWNER_TOKEN, baseURL: `${steward.url}/v1`, maxRetries: 0 });
      const ask = (content: string) =>
        client.chat.completions.create({ model: 'steward', messages: [{ role: 'user', content }] });
      expect((await ask('first')).choices[0]?.message.content).toBe('ok');
      const web = await loginAs(steward.url, OWNER_TOKEN);
      expect((await web.post('/chat', { text: 'second' })).headers.get('location')).toBe('/chat');

      const refused = await ask('third').catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.APIError);
      expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(429);
      expect((refused as Error).message).toContain('Too many messages from user local: at most 2 a minute');

      const form = await web.post('/chat', { text: 'fourth' });
      expect(decodeURIComponent(form.headers.get('location') ?? '')).toContain(
        'Too many messages from user local',
      );
      const stream = await (await web.post('/chat/stream', { text: 'fifth' })).text();
      expect(stream).toContain('event: error');
      expect(stream).toContain('Too many messages from user local');

      const stored = await steward.runtime.database.query<{ request: string }>(
        "SELECT request FROM turns WHERE user_id = 'local' ORDER BY seq",
      );
      expect(stored.map((turn) => turn.request)).toEqual(['first', 'second']);
    });
  });
}
