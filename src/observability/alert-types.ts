import type { Severity } from '../config/index.ts';

export type { Severity };

/**
 * Something a person should know. `key` de-duplicates: alerts with the same key within the
 * throttle window are counted, not sent. `title` and `detail` are short summaries: never
 * message content, never secrets (the router also redacts configured secrets).
 */
export type Alert = {
  severity: Severity;
  key: string;
  title: string;
  detail?: string;
};

/** A place alerts go (the Google Chat webhook, email, the owner's primary channel). */
export interface AlertDestination {
  readonly name: string;
  /** Receives alerts at or above this severity. */
  readonly minSeverity: Severity;
  /** Rejects when the destination is down; the router retries with backoff. */
  send(text: string, alert: Alert, signal: AbortSignal): Promise<void>;
}

const RANK: Record<Severity, number> = { info: 0, warning: 1, error: 2, critical: 3 };

export function atLeast(severity: Severity, minimum: Severity): boolean {
  return RANK[severity] >= RANK[minimum];
}

export function higher(a: Severity, b: Severity): Severity {
  return RANK[a] >= RANK[b] ? a : b;
}

/** Sends an email (the integrations' email provider, when one is connected). */
export type SendEmail = (message: { to: string; subject: string; text: string }) => Promise<void>;

/** Delivers a message to the owner's primary channel (the channels' `deliver`). */
export type DeliverToOwner = (text: string) => Promise<void>;
