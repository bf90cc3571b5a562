import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOtlpCollector, startFakeOtlpCollector } from '../../test/support/fake-otlp-collector.ts';
import { otlpSettings } from './otlp-settings.ts';
import { createTracing } from './tracer.ts';
import { TurnSpans } from './turn-spans.ts';

const base = { service_name: 'steward' };

describe('otlpSettings', () => {
  it('is off without an endpoint, and appends /v1/traces to the general endpoint', () => {
    expect(otlpSettings(base)).toEqual({ settings: null, problem: null });
    expect(otlpSettings({ ...base, otlp_endpoint: 'http://collector:4318/' })).toEqual({
      settings: {
        url: 'http://collector:4318/v1/traces',
        protocol: 'http/protobuf',
        headers: {},
        serviceName: 'steward',
      },
      problem: null,
    });
  });

  it('uses the traces endpoint as given, the protocol and the headers', () => {
    const { settings } = otlpSettings({
      ...base,
      otlp_endpoint: 'http://ignored:4318',
      otlp_traces_endpoint: 'https://otlp.example/api/traces?tenant=a',
      otlp_protocol: 'http/json',
      otlp_headers: 'authorization=Bearer%20abc,x-team=steward',
    });
    expect(settings).toMatchObject({
      url: 'https://otlp.example/api/traces?tenant=a',
      protocol: 'http/json',
      headers: { authorization: 'Bearer abc', 'x-team': 'steward' },
    });
  });

  it('reports malformed settings as problems that name the variable and the fix', () => {
    expect(otlpSettings({ ...base, otlp_endpoint: 'collector:4318' }).problem).toBe(
      'OTEL_EXPORTER_OTLP_ENDPOINT "collector:4318" is not an http(s) URL; set it to the collector\'s OTLP/HTTP address, e.g. http://localhost:4318',
    );
    expect(
      otlpSettings({ ...base, otlp_endpoint: 'http://c:4317', otlp_protocol: 'grpc' }).problem,
    ).toContain('grpc is not supported; use http/protobuf (the default) or http/json');
    expect(
      otlpSettings({ ...base, otlp_endpoint: 'http://c:4318', otlp_headers: 'no-equals-sign' }).problem,
    ).toContain('OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs');
  });
});

describe('OTLP export', () => {
  let collector: FakeOtlpCollector;
  beforeAll(async () => {
    collector = await startFakeOtlpCollector();
  });
  afterAll(async () => {
    await collector.close();
  });

  it('sends protobuf by default, with the configured headers', async () => {
    const { settings } = otlpSettings({
      ...base,
      otlp_endpoint: collector.url,
      otlp_headers: 'x-api-key=k-123',
    });
    const tracing = createTracing(settings!, '0.0.0-test');
    const spans = new TurnSpans(tracing.tracer);
    const turn = { turnId: 'turn-proto', conversationId: 'c', userId: 'u', channel: 'cli' };
    spans.turnEvent(
      { type: 'turn_start', turnId: 'turn-proto', conversationId: 'c', mode: 'direct', resumed: false },
      turn,
    );
    spans.turnEvent(
      {
        type: 'turn_end',
        turnId: 'turn-proto',
        status: 'completed',
        reply: 'ok',
        usage: { promptTokens: 1, cachedTokens: 0, cacheWriteTokens: 0, completionTokens: 1, cost: 0 },
        receipts: [],
      },
      turn,
    );
    await tracing.flush();
    await tracing.shutdown();
    expect(collector.requests).toHaveLength(1);
    const [request] = collector.requests;
    expect(request).toMatchObject({ path: '/v1/traces', contentType: 'application/x-protobuf' });
    expect(request!.headers['x-api-key']).toBe('k-123');
    // Protobuf keeps strings as they are: the span's name and turn id are in the body.
    expect(request!.body.includes(Buffer.from('turn-proto'))).toBe(true);
  });
});
