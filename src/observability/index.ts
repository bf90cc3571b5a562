/*
 * Watching Steward run: metrics (Prometheus), traces (OpenTelemetry), alerts to the owner, and
 * the daily spend guard — one Observability object the runtime builds. Metrics and tracing load
 * on demand: their libraries cost start-up time and they are off unless configured.
 */
export { Observability, type ObservabilityOptions } from './observability.ts';
export { type OtlpProtocol, type OtlpResolution, type OtlpSettings, otlpSettings } from './otlp-settings.ts';
export type { MetricsSeed, MetricsSources, StewardMetrics, WebhookResult } from './steward-metrics.ts';
