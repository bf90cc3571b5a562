import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeWebhook, startFakeWebhook } from '../../test/support/fake-webhook.ts';
import { AlertRouter } from './alert-router.ts';
import type { Alert, AlertDestination, Severity } from './alert-types.ts';
import { Alerts } from './alerts.ts';
import { googleChatWebhook } from './destinations.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function recording(minSeverity: Severity = 'info'): AlertDestination & { texts: string[] } {
  const texts: string[] = [];
  return { name: 'test', minSeverity, texts, send: async (text) => void texts.push(text) };
}

const alert = (key: string, title = 'Something broke', severity: Severity = 'error'): Alert => ({
  severity,
  key,
  title,
});

let webhook: FakeWebhook;
beforeAll(async () => {
  webhook = await startFakeWebhook();
});
afterAll(async () => {
  await webhook.close();
});
afterEach(() => webhook.reset());

describe('AlertRouter', () => {
  it('sends the first alert of a key at once and one "N more" summary when the window ends', async () => {
    const destination = recording();
    const router = new AlertRouter({ destinations: () => [destination], throttleMs: () => 150 });
    for (let index = 0; index < 5; index++) router.raise(alert('disk'));
    router.raise(alert('other', 'Another thing'));
    await router.flush();
    expect(destination.texts).toEqual(['[ERROR] Steward: Something broke', '[ERROR] Steward: Another thing']);
    await sleep(250);
    await router.flush();
    expect(destination.texts).toEqual([
      '[ERROR] Steward: Something broke',
      '[ERROR] Steward: Another thing',
      '[ERROR] Steward: 4 more: Something broke',
    ]);
    // The summary opened a new window with nothing in it: no further message, and the key is
    // forgotten, so the next alert goes out at once.
    await sleep(250);
    router.raise(alert('disk'));
    await router.flush();
    expect(destination.texts).toHaveLength(4);
    router.close();
  });

  it('routes by minimum severity', async () => {
    const all = recording('info');
    const serious = recording('error');
    const router = new AlertRouter({ destinations: () => [all, serious], throttleMs: () => 1_000 });
    router.raise(alert('a', 'just so you know', 'info'));
    router.raise(alert('b', 'down', 'critical'));
    await router.flush();
    expect(all.texts).toHaveLength(2);
    expect(serious.texts).toEqual(['[CRITICAL] Steward: down']);
    router.close();
  });

  it('never carries a configured secret', async () => {
    const destination = recording();
    const router = new AlertRouter({
      destinations: () => [destination],
      throttleMs: () => 1_000,
      secrets: () => ['sk-secret-0123456789'],
    });
    router.raise({
      severity: 'error',
      key: 'k',
      title: 'LLM failing',
      detail: '401 for sk-secret-0123456789',
    });
    await router.flush();
    expect(destination.texts[0]).toContain('[redacted]');
    expect(destination.texts[0]).not.toContain('sk-secret-0123456789');
    router.close();
  });

  it('posts {text} to the webhook URL exactly as given, query string included', async () => {
    const url = `${webhook.url}/v1/spaces/AAA/messages?key=abc-DEF&token=x%3Dy`;
    const router = new AlertRouter({
      destinations: () => [googleChatWebhook(url, 'info')],
      throttleMs: () => 1_000,
    });
    router.raise(alert('k', 'Breaker opened'));
    await router.flush();
    expect(webhook.delivered).toHaveLength(1);
    expect(webhook.delivered[0]).toMatchObject({
      method: 'POST',
      url: '/v1/spaces/AAA/messages?key=abc-DEF&token=x%3Dy',
      body: { text: '[ERROR] Steward: Breaker opened' },
    });
    expect(webhook.delivered[0]!.contentType).toContain('application/json');
    router.close();
  });

  it('queues and retries while the webhook is down, without blocking the caller', async () => {
    webhook.down = true;
    const router = new AlertRouter({
      destinations: () => [googleChatWebhook(`${webhook.url}/hook`, 'info')],
      throttleMs: () => 10_000,
      retryBaseMs: 30,
    });
    // raise returns at once (no promise to wait on): the delivery and its retries happen after it.
    expect(router.raise(alert('k', 'Job failed'))).toBeUndefined();
    expect(webhook.received).toHaveLength(0);
    await sleep(100);
    expect(webhook.received.length).toBeGreaterThanOrEqual(2);
    expect(webhook.delivered).toHaveLength(0);
    webhook.down = false;
    await router.flush();
    expect(webhook.delivered.map((entry) => entry.body)).toEqual([{ text: '[ERROR] Steward: Job failed' }]);
    router.close();
  });
});

describe('Alerts', () => {
  it('ten consecutive LLM failures raise one alert on the third, and one "N more" summary later', async () => {
    const router = new AlertRouter({
      destinations: () => [googleChatWebhook(`${webhook.url}/hook?key=k`, 'warning')],
      // Long enough that the window cannot close before the first delivery is checked, however
      // slow the machine.
      throttleMs: () => 2_000,
    });
    const alerts = new Alerts({
      router,
      llmEndpoint: () => 'llm.example:443',
      webhookThreshold: () => 10,
      webhookWindowMs: () => 60_000,
    });
    const failure = {
      role: 'orchestrator' as const,
      model: 'm',
      usage: { promptTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, completionTokens: 0, cost: 0 },
      latencyMs: 5,
      errorClass: 'provider_down' as const,
      error: 'HTTP 503',
    };
    alerts.llmCall(failure);
    alerts.llmCall(failure);
    await router.flush();
    expect(webhook.received).toHaveLength(0);
    for (let index = 2; index < 10; index++) alerts.llmCall(failure);
    await router.flush();
    expect(webhook.delivered).toHaveLength(1);
    expect((webhook.delivered[0]!.body as { text: string }).text).toContain(
      'LLM endpoint llm.example:443 is failing',
    );
    await webhook.waitFor(2);
    expect((webhook.delivered[1]!.body as { text: string }).text).toContain('7 more: LLM endpoint');
    await sleep(400);
    expect(webhook.delivered).toHaveLength(2);
    router.close();
  });

  it('a success resets the failure streak', async () => {
    const destination = recording();
    const router = new AlertRouter({ destinations: () => [destination], throttleMs: () => 1_000 });
    const alerts = new Alerts({
      router,
      llmEndpoint: () => 'e',
      webhookThreshold: () => 10,
      webhookWindowMs: () => 60_000,
    });
    const call = {
      role: 'orchestrator' as const,
      model: 'm',
      usage: { promptTokens: 1, cachedTokens: 0, cacheWriteTokens: 0, completionTokens: 1, cost: 0 },
      latencyMs: 1,
    };
    for (let index = 0; index < 4; index++) {
      alerts.llmCall({ ...call, errorClass: 'timeout' });
      alerts.llmCall({ ...call, errorClass: 'timeout' });
      alerts.llmCall(call);
    }
    // Aborted calls and bad requests are not the endpoint failing.
    for (let index = 0; index < 4; index++) alerts.llmCall({ ...call, errorClass: 'aborted' });
    await router.flush();
    expect(destination.texts).toEqual([]);
    router.close();
  });

  it('webhook verification failures alert only above the rate', async () => {
    const destination = recording();
    const router = new AlertRouter({ destinations: () => [destination], throttleMs: () => 1_000 });
    const alerts = new Alerts({
      router,
      llmEndpoint: () => null,
      webhookThreshold: () => 3,
      webhookWindowMs: () => 60_000,
    });
    for (let index = 0; index < 3; index++) alerts.webhookVerificationFailed('telegram');
    await router.flush();
    expect(destination.texts).toEqual([]);
    alerts.webhookVerificationFailed('telegram');
    await router.flush();
    expect(destination.texts).toEqual([
      '[WARNING] Steward: Inbound telegram webhooks are failing verification\n4 rejected in the last 1 min: a wrong secret, or someone probing the endpoint',
    ]);
    router.close();
  });
});
