import type { ResolvedConfig } from '../config/index.ts';
import type { Logger } from '../logging/index.ts';
import { AlertRouter } from './alert-router.ts';
import { Alerts } from './alerts.ts';
import { configuredDestinations, type DestinationSeams } from './destinations.ts';

export { AlertRouter, type AlertRouterOptions, formatAlert } from './alert-router.ts';
export type { Alert, AlertDestination, DeliverToOwner, SendEmail, Severity } from './alert-types.ts';
export { Alerts, type AlertsOptions, LLM_FAILURES_BEFORE_ALERT } from './alerts.ts';
export {
  configuredDestinations,
  type DestinationSeams,
  emailDestination,
  googleChatWebhook,
  ownerDestination,
} from './destinations.ts';

/** The host of an endpoint URL, for alert keys and texts (never its path, query or credentials). */
function endpointHost(baseUrl: string | null): string | null {
  if (!baseUrl) return null;
  try {
    return new URL(baseUrl).host;
  } catch {
    return null;
  }
}

/**
 * Alerts as the configuration asks (read on every alert, so hot reload applies). `seams`
 * is mutable: the lead wires `sendEmail` and `deliverToOwner` when those exist.
 */
export function createAlerts(
  config: () => ResolvedConfig,
  seams: DestinationSeams,
  logger: Logger,
  /** Secrets beyond the configuration's (stored credentials), masked in every alert too. */
  moreSecrets: () => readonly string[] = () => [],
): { alerts: Alerts; router: AlertRouter } {
  const router = new AlertRouter({
    destinations: () => configuredDestinations(config().alerts, seams),
    throttleMs: () => config().alerts.throttle_minutes * 60_000,
    secrets: () => [...config().secrets, ...moreSecrets()],
    logger,
  });
  const alerts = new Alerts({
    router,
    llmEndpoint: () => endpointHost(config().endpoint.baseUrl),
    webhookThreshold: () => config().alerts.webhook_failures_threshold,
    webhookWindowMs: () => config().alerts.webhook_failures_window_minutes * 60_000,
  });
  return { alerts, router };
}
