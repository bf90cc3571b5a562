export {
  type MetricsSeed,
  type MetricsSources,
  StewardMetrics,
  TURN_MODES,
  TURN_STATUSES,
  WEBHOOK_CHANNELS,
  type WebhookResult,
} from './steward-metrics.ts';
