import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeWebhook, startFakeWebhook } from '../../test/support/fake-webhook.ts';
import { loadConfig } from '../config/index.ts';
import type { Queryable } from '../db/index.ts';
import { silentLogger } from '../logging/index.ts';
import { Observability } from './observability.ts';

let webhook: FakeWebhook;
beforeAll(async () => {
  webhook = await startFakeWebhook();
});
afterAll(async () => {
  await webhook.close();
});

/** The hooks under test never reach the database (no spend caps are set). */
const noDatabase: Queryable = {
  query: async () => {
    throw new Error('unexpected query');
  },
};

function observability(env: Record<string, string>) {
  const config = loadConfig({ env, cwd: process.cwd() });
  return Observability.create({ config: () => config, database: noDatabase, logger: silentLogger() });
}

describe('Observability', () => {
  it('starts with tracing off and the reason when the OTLP endpoint is malformed', async () => {
    const broken = await observability({ OTEL_EXPORTER_OTLP_ENDPOINT: '::not a url::' });
    expect(broken.tracingEnabled).toBe(false);
    expect(broken.tracingProblem).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
    await broken.close();
    const fine = await observability({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' });
    expect(fine.tracingEnabled).toBe(true);
    expect(fine.tracingProblem).toBeNull();
    await fine.close();
  });

  it('counts webhooks and job failures, alerting on a final job failure and on rejected webhooks above the rate', async () => {
    const observed = await observability({ STEWARD_ALERT_WEBHOOK_URL: `${webhook.url}/hook` });
    observed.webhookReceived('telegram', 'verified');
    for (let index = 0; index < 11; index++) observed.webhookReceived('telegram', 'rejected');
    observed.onJobFailure({ queue: 'memory.compaction', jobId: 'j1', error: 'boom', final: false });
    observed.onJobFailure({ queue: 'memory.compaction', jobId: 'j1', error: 'boom', final: true });
    await observed.flush();
    const texts = webhook.delivered.map((entry) => (entry.body as { text: string }).text);
    expect(texts).toEqual([
      expect.stringContaining('Inbound telegram webhooks are failing verification\n11 rejected'),
      '[ERROR] Steward: Job memory.compaction failed after its last retry\njob j1: boom',
    ]);
    const { body } = await observed.metrics!.render();
    expect(body).toContain('steward_webhooks_total{channel="telegram",result="rejected"} 11');
    expect(body).toContain('steward_webhooks_total{channel="telegram",result="verified"} 1');
    expect(body).toContain('steward_job_failures_total{queue="memory.compaction",final="true"} 1');
    await observed.close();
  });
});
