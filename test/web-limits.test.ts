import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { loginAs, OWNER_TOKEN, startWebSteward, type WebSteward } from './support/web.ts';

/*
 * Issue 21 §4 on the dashboard and /v1: every route has a body limit, enforced while the body
 * streams in (form routes 64 KB, the chat message routes what 32,000 characters can take);
 * a malformed multipart login is a 400 that counts as a failed login; wrong API keys are
 * throttled per address, valid ones never refused.
 */

const FORM_LIMIT = 64 * 1024;

/** A body of `total` bytes in 16 KB chunks, streamed (no Content-Length); `pulled` counts what was read. */
function streamedBody(total: number, fill = 'a'): { body: ReadableStream<Uint8Array>; pulled(): number } {
  const chunk = new TextEncoder().encode(fill.repeat(16 * 1024));
  let sent = 0;
  return {
    body: new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= total) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    }),
    pulled: () => sent,
  };
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

for (const backend of backends()) {
  describe(`body limits and token throttles on the web routes [${backend}]`, { timeout: 120_000 }, () => {
    let fake: FakeLlm;
    let steward: WebSteward;
    beforeAll(async () => {
      fake = await startFakeLlm();
      fake.respondWith(() => ({ text: 'ok' }));
      steward = await startWebSteward(backend, fake);
    }, 120_000);
    afterAll(async () => {
      await steward?.stop();
      await fake?.close();
    });

    it('answers POST /login over the form limit with 413, declared or streamed, without reading it all', async () => {
      const declared = await fetch(`${steward.url}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form({ token: 'x'.repeat(FORM_LIMIT + 1) }),
        redirect: 'manual',
      });
      expect(declared.status).toBe(413);
      expect(((await declared.json()) as { message: string }).message).toContain(`${FORM_LIMIT} bytes`);

      // Streamed without a length: refused once the limit is passed, the rest never read.
      const streamed = streamedBody(8 * 1024 * 1024);
      const response = await steward.app.request('http://localhost/login', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: streamed.body,
        duplex: 'half',
      } as RequestInit);
      expect(response.status).toBe(413);
      expect(streamed.pulled()).toBeLessThan(FORM_LIMIT + 64 * 1024);
    });

    it('answers a malformed multipart login with 400, counted as a failed login', async () => {
      const malformed = () =>
        steward.app.request('http://localhost/login', {
          method: 'POST',
          headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
          body: '--xyz\r\nContent-Disposition: form-data; name="token"\r\n\r\nabc',
        });
      const statuses: number[] = [];
      for (let index = 0; index < 6; index++) statuses.push((await malformed()).status);
      expect(statuses).toEqual([400, 400, 400, 400, 400, 429]);
      // The right token still logs in from the throttled address.
      const right = await steward.app.request('http://localhost/login', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form({ token: OWNER_TOKEN }),
      });
      expect(right.status).toBe(303);
    });

    it('limits /logout and the page forms to 64 KB, and the chat to what a long message needs', async () => {
      const owner = await loginAs(steward.url, OWNER_TOKEN);
      const big = await owner.post('/logout', { pad: 'x'.repeat(FORM_LIMIT) });
      expect(big.status).toBe(413);
      const schedule = await owner.post('/schedules/run', { pad: 'x'.repeat(FORM_LIMIT) });
      expect(schedule.status).toBe(413);
      // The longest message the chat takes (32,000 characters), in Japanese, is 288 KB as a form.
      const long = await fetch(`${steward.url}/chat/stream`, {
        method: 'POST',
        headers: {
          cookie: owner.cookie,
          'x-csrf-token': owner.csrf,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: form({ text: '日本語'.repeat(10_666) }),
      });
      expect(long.status).toBe(200);
      expect(await long.text()).toContain('event: done');
      const tooLong = await owner.post('/chat', { text: '日本語'.repeat(20_000) });
      expect(tooLong.status).toBe(413);
      // Still logged in: the refused logout did not end the session.
      expect((await owner.get('/chat')).status).toBe(200);
    });

    it('throttles wrong /v1 API keys per address, never a valid one', async () => {
      const ask = (key: string) =>
        fetch(`${steward.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
      const statuses: number[] = [];
      for (let index = 0; index < 22; index++) statuses.push((await ask(`sk-wrong-${index}`)).status);
      expect(statuses).toEqual([...Array<number>(20).fill(401), 429, 429]);
      const refused = await ask('sk-wrong-again');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('auth_throttled');
      expect((await ask(OWNER_TOKEN)).status).toBe(200);
      // Its bodies are limited like the API's, and refused in OpenAI's error shape.
      const huge = await steward.app.request('http://localhost/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: `Bearer ${OWNER_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'steward',
          messages: [{ role: 'user', content: 'x'.repeat(1_100_000) }],
        }),
      });
      expect(huge.status).toBe(413);
      expect(((await huge.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
    });
  });
}
