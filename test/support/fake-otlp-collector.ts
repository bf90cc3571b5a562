import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * A fake OpenTelemetry collector speaking OTLP/HTTP on a real port. JSON exports
 * (`application/json`) are decoded into flat spans; protobuf exports are recorded raw.
 */

export type CollectedSpan = {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  attributes: Record<string, string | number | boolean>;
  links: Array<{ traceId: string; spanId: string }>;
  status: { code?: number; message?: string };
  resource: Record<string, string | number | boolean>;
};

export type CollectorRequest = {
  path: string;
  contentType: string;
  headers: Record<string, string>;
  bytes: number;
  body: Buffer;
};

export type FakeOtlpCollector = {
  /** Base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  readonly requests: CollectorRequest[];
  readonly spans: CollectedSpan[];
  /** Polls until `predicate` holds for the spans collected so far. */
  waitFor(predicate: (spans: CollectedSpan[]) => boolean, timeoutMs?: number): Promise<CollectedSpan[]>;
  reset(): void;
  close(): Promise<void>;
};

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
};
type KeyValue = { key: string; value: AnyValue };

function attributes(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
  }
  return out;
}

type JsonSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: KeyValue[];
  links?: Array<{ traceId: string; spanId: string }>;
  status?: { code?: number; message?: string };
};
type JsonExport = {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: Array<{ spans?: JsonSpan[] }>;
  }>;
};

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

export async function startFakeOtlpCollector(): Promise<FakeOtlpCollector> {
  const requests: CollectorRequest[] = [];
  const spans: CollectedSpan[] = [];
  const server = createServer(async (request, response) => {
    const body = await readBody(request);
    const contentType = request.headers['content-type'] ?? '';
    requests.push({
      path: request.url ?? '',
      contentType,
      headers: Object.fromEntries(
        Object.entries(request.headers).map(([key, value]) => [key, String(value)]),
      ),
      bytes: body.length,
      body,
    });
    if (contentType.includes('json')) {
      const parsed = JSON.parse(body.toString('utf8')) as JsonExport;
      for (const resourceSpans of parsed.resourceSpans ?? []) {
        const resource = attributes(resourceSpans.resource?.attributes);
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name,
              kind: span.kind,
              startTimeUnixNano: BigInt(span.startTimeUnixNano),
              endTimeUnixNano: BigInt(span.endTimeUnixNano),
              attributes: attributes(span.attributes),
              links: (span.links ?? []).map((link) => ({ traceId: link.traceId, spanId: link.spanId })),
              status: span.status ?? {},
              resource,
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
      return;
    }
    response.writeHead(200, { 'content-type': 'application/x-protobuf' });
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    spans,
    async waitFor(predicate, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(spans)) {
        if (Date.now() > deadline) {
          throw new Error(
            `the collector did not get the expected spans; got: ${spans.map((s) => s.name).join(', ')}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return spans;
    },
    reset() {
      requests.length = 0;
      spans.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
