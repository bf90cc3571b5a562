import type { Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { OtlpSettings } from './otlp-settings.ts';

export type Tracing = {
  tracer: Tracer;
  /** Exports every finished span now (tests, one-shot commands). */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
};

/**
 * A tracer provider exporting over OTLP/HTTP (JSON or protobuf) in batches. It is not
 * registered globally: Steward builds its spans itself from turn events, so nothing else in
 * the process is traced by accident. Export failures are dropped by the SDK, never thrown.
 */
export function createTracing(
  settings: OtlpSettings,
  version: string,
  env: Record<string, string | undefined> = process.env,
): Tracing {
  // The SDK leaves the batch settings to its caller: honour the standard OTEL_BSP_* variables.
  const positive = (name: string) => {
    const value = Number(env[name]);
    return Number.isFinite(value) && value > 0 ? value : undefined;
  };
  const options = { url: settings.url, headers: settings.headers };
  const exporter =
    settings.protocol === 'http/json' ? new JsonExporter(options) : new ProtobufExporter(options);
  // OTEL_RESOURCE_ATTRIBUTES are honoured; the service name comes from OTEL_SERVICE_NAME (config).
  const resource = resourceFromAttributes(envDetector.detect().attributes ?? {}).merge(
    resourceFromAttributes({ 'service.name': settings.serviceName, 'service.version': version }),
  );
  const provider = new TracerProvider({
    resource,
    spanProcessors: [
      new BatchSpanProcessor({
        exporter,
        scheduledDelayMillis: positive('OTEL_BSP_SCHEDULE_DELAY'),
        exportTimeoutMillis: positive('OTEL_BSP_EXPORT_TIMEOUT'),
        maxQueueSize: positive('OTEL_BSP_MAX_QUEUE_SIZE'),
        maxExportBatchSize: positive('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
      }),
    ],
  });
  return {
    tracer: provider.getTracer('steward', version),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
