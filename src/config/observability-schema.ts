import { z } from 'zod';

export const SEVERITIES = ['info', 'warning', 'error', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

const severity = z.enum(SEVERITIES);
const usd = z.coerce.number().positive('must be a positive amount in US dollars');

export const alertsSchema = z
  .object({
    webhook_url: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
      .optional()
      .describe(
        'A Google Chat incoming webhook (`https://chat.googleapis.com/v1/spaces/…/messages?key=…&token=…`), used exactly as given (a secret: masked in logs).',
      ),
    email_to: z
      .email('must be an email address')
      .optional()
      .describe("Address that receives alerts by email, sent from the owner's connected mailbox."),
    throttle_minutes: z.coerce
      .number()
      .positive()
      .default(15)
      .describe('Window per dedup key: later alerts are counted, then summarized once.'),
    min_severity: z
      .object({
        webhook: severity.default('warning').describe('Lowest severity the webhook receives.'),
        email: severity.default('error').describe('Lowest severity the email address receives.'),
        owner: severity.default('error').describe("Lowest severity the owner's primary channel receives."),
      })
      .strict()
      .default({ webhook: 'warning', email: 'error', owner: 'error' }),
    webhook_failures_threshold: z.coerce
      .number()
      .int()
      .positive()
      .default(10)
      .describe(
        'Inbound webhooks failing verification more than this many times per window (per channel) raise an alert.',
      ),
    webhook_failures_window_minutes: z.coerce
      .number()
      .positive()
      .default(5)
      .describe('The window of `webhook_failures_threshold`.'),
  })
  .strict()
  .describe(
    'Where alerts go, and how often. Destinations get every alert at or above their minimum severity.',
  );

export const spendSchema = z
  .object({
    daily_soft_usd: usd
      .optional()
      .describe('Per-user spend per UTC day above which the owner is alerted (once).'),
    daily_hard_usd: usd
      .optional()
      .describe('Per-user spend per UTC day at which new turns of that user are refused until the next day.'),
  })
  .strict()
  .describe('Per-user LLM spend per UTC day, from the roster prices.');

/**
 * Kept as plain strings: a malformed endpoint must not stop Steward (`doctor` reports it and
 * tracing stays off).
 */
export const tracingSchema = z
  .object({
    otlp_endpoint: z
      .string()
      .optional()
      .describe('OTLP/HTTP collector (`/v1/traces` is appended); traces are off unless set.'),
    otlp_traces_endpoint: z.string().optional().describe('Full traces URL, used as given.'),
    otlp_protocol: z
      .string()
      .optional()
      .describe('`http/protobuf` (the default) or `http/json`; `grpc` is not supported.'),
    otlp_headers: z
      .string()
      .optional()
      .describe('`key=value,key2=value2` sent to the collector; values are treated as secrets.'),
    service_name: z.string().min(1).default('steward').describe('`service.name` of the spans.'),
  })
  .strict()
  .describe('OpenTelemetry trace export: one trace per turn.');

export const logsSchema = z
  .object({
    file: z
      .union([z.boolean(), z.stringbool()])
      .default(true)
      .describe(
        '`steward start` also writes JSON logs to `<data dir>/logs/steward.log` (rotated), which `steward logs` reads.',
      ),
    max_file_mb: z.coerce.number().positive().default(10).describe('The log file is rotated at this size.'),
    max_files: z.coerce
      .number()
      .int()
      .min(1)
      .default(5)
      .describe('Rotated log files kept (the oldest is dropped).'),
  })
  .strict()
  .describe('The log file.');

export type AlertsConfig = z.infer<typeof alertsSchema>;
export type SpendConfig = z.infer<typeof spendSchema>;
export type TracingConfig = z.infer<typeof tracingSchema>;
export type LogsConfig = z.infer<typeof logsSchema>;
