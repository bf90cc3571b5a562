import type { AlertsConfig } from '../config/index.ts';
import type { AlertDestination, DeliverToOwner, SendEmail, Severity } from './alert-types.ts';

const WEBHOOK_TIMEOUT_MS = 10_000;

/**
 * A Google Chat incoming webhook: `POST` JSON `{text}` to the URL exactly as configured (its
 * `key` and `token` live in the query string). Any non-2xx answer is a failure to retry.
 */
export function googleChatWebhook(
  url: string,
  minSeverity: Severity,
  fetchImpl: typeof fetch = fetch,
): AlertDestination {
  return {
    name: 'webhook',
    minSeverity,
    async send(text, _alert, signal) {
      const response = await fetchImpl(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=UTF-8' },
        body: JSON.stringify({ text }),
        signal: AbortSignal.any([signal, AbortSignal.timeout(WEBHOOK_TIMEOUT_MS)]),
      });
      // Drain the body so the connection is reused; its content is not needed.
      await response.arrayBuffer().catch(() => undefined);
      if (!response.ok) throw new Error(`the alert webhook answered HTTP ${response.status}`);
    },
  };
}

export function emailDestination(to: string, minSeverity: Severity, sendEmail: SendEmail): AlertDestination {
  return {
    name: 'email',
    minSeverity,
    send: (text, alert) =>
      sendEmail({ to, subject: `[Steward ${alert.severity}] ${alert.title}`.slice(0, 150), text }),
  };
}

export function ownerDestination(minSeverity: Severity, deliverToOwner: DeliverToOwner): AlertDestination {
  return { name: 'owner', minSeverity, send: (text) => deliverToOwner(text) };
}

export type DestinationSeams = {
  fetch?: typeof fetch;
  /** Set once an email provider is connected; without it, email alerts are skipped. */
  sendEmail?: SendEmail;
  /** Set once channels can deliver; without it, owner alerts are skipped. */
  deliverToOwner?: DeliverToOwner;
};

/** The destinations the alert settings ask for and the wired seams allow. */
export function configuredDestinations(alerts: AlertsConfig, seams: DestinationSeams): AlertDestination[] {
  const destinations: AlertDestination[] = [];
  if (alerts.webhook_url) {
    destinations.push(googleChatWebhook(alerts.webhook_url, alerts.min_severity.webhook, seams.fetch));
  }
  if (alerts.email_to && seams.sendEmail) {
    destinations.push(emailDestination(alerts.email_to, alerts.min_severity.email, seams.sendEmail));
  }
  if (seams.deliverToOwner)
    destinations.push(ownerDestination(alerts.min_severity.owner, seams.deliverToOwner));
  return destinations;
}
