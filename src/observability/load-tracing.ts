import type { OtlpSettings } from './otlp-settings.ts';
import type { Tracing } from './tracer.ts';
import type { TurnSpans } from './turn-spans.ts';

export { type OtlpProtocol, type OtlpResolution, type OtlpSettings, otlpSettings } from './otlp-settings.ts';
export type { Tracing } from './tracer.ts';
export type { TurnSpans } from './turn-spans.ts';

/**
 * The tracer and the turn-span builder. Loaded on demand: the OpenTelemetry SDK and exporters
 * cost a noticeable part of every command's start-up, and tracing is off unless configured.
 */
export async function loadTracing(
  settings: OtlpSettings,
  version: string,
): Promise<{ tracing: Tracing; spans: TurnSpans }> {
  const [{ createTracing }, { TurnSpans }] = await Promise.all([
    import('./tracer.ts'),
    import('./turn-spans.ts'),
  ]);
  const tracing = createTracing(settings, version);
  return { tracing, spans: new TurnSpans(tracing.tracer) };
}
