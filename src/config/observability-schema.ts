import { z } from 'zod';

export const SEVERITIES = ['info', 'warning', 'error', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

const severity = z.enum(SEVERITIES);
const usd = z.coerce.number().positive('must be a positive amount in US dollars');

/** Where alerts go, and how often. Destinations get every alert at or above their minimum severity. */
export const alertsSchema = z
  .object({
    /** A Google Chat incoming webhook (`https://chat.googleapis.com/v1/spaces/…/messages?key=…&token=…`), used exactly as given. */
    webhook_url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    /** Alerts by email, through the email provider when one is connected. */
    email_to: z.email('must be an email address').optional(),
    throttle_minutes: z.coerce.number().positive().default(15),
    min_severity: z
      .object({
        webhook: severity.default('warning'),
        email: severity.default('error'),
        owner: severity.default('error'),
      })
      .strict()
      .default({ webhook: 'warning', email: 'error', owner: 'error' }),
    /** Inbound webhooks failing verification more than this many times per window raise an alert. */
    webhook_failures_threshold: z.coerce.number().int().positive().default(10),
    webhook_failures_window_minutes: z.coerce.number().positive().default(5),
  })
  .strict();

/** Per-user spend per UTC day. */
export const spendSchema = z
  .object({
    /** Above this, the owner is alerted (once per user and day). */
    daily_soft_usd: usd.optional(),
    /** At or above this, new turns of that user are refused until the next UTC day. */
    daily_hard_usd: usd.optional(),
  })
  .strict();

/**
 * OpenTelemetry export. Kept as plain strings: a malformed endpoint must not stop Steward
 * (`doctor` reports it and tracing stays off).
 */
export const tracingSchema = z
  .object({
    otlp_endpoint: z.string().optional(),
    otlp_traces_endpoint: z.string().optional(),
    otlp_protocol: z.string().optional(),
    /** `key=value,key2=value2`; values are treated as secrets. */
    otlp_headers: z.string().optional(),
    service_name: z.string().min(1).default('steward'),
  })
  .strict();

export const logsSchema = z
  .object({
    /** Also write JSON logs to `<data dir>/logs/steward.log` (rotated), which `steward logs` reads. */
    file: z.union([z.boolean(), z.stringbool()]).default(true),
    max_file_mb: z.coerce.number().positive().default(10),
    max_files: z.coerce.number().int().min(1).default(5),
  })
  .strict();

export type AlertsConfig = z.infer<typeof alertsSchema>;
export type SpendConfig = z.infer<typeof spendSchema>;
export type TracingConfig = z.infer<typeof tracingSchema>;
export type LogsConfig = z.infer<typeof logsSchema>;
