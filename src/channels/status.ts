import type { ResolvedConfig } from '../config/index.ts';
import type { Queryable } from '../db/index.ts';
import { channelsPublicUrl, WEBHOOK_PATHS } from './registry.ts';
import { CHANNEL_NAMES, type ChannelMode, type ChannelName } from './types.ts';

export type ChannelStatus = {
  channel: ChannelName;
  configured: boolean;
  /** How messages arrive: a webhook, long polling (Telegram without a public URL, Matrix), a socket (Discord). */
  mode: ChannelMode | null;
  /** The URL to register with the platform, when STEWARD_PUBLIC_URL is set. */
  webhookUrl: string | null;
  problems: string[];
  lastInboundAt: Date | null;
  lastOutboundAt: Date | null;
  /** Replies waiting to be sent (or being sent). */
  backlog: number;
  failed: number;
  ambiguous: number;
  /** Webhooks refused or dropped (bad signature, stale, oversized, malformed). */
  rejected: number;
  lastRejection: string | null;
};

/** Counts a refused webhook for the operator view. Never throws: the refusal matters more. */
export async function recordWebhookRejection(
  db: Queryable,
  channel: ChannelName,
  reason: string,
): Promise<void> {
  await db
    .query(
      `INSERT INTO webhook_rejections (channel, reason, count, last_at) VALUES ($1, $2, 1, now())
       ON CONFLICT (channel, reason) DO UPDATE SET count = webhook_rejections.count + 1, last_at = now()`,
      [channel, reason.slice(0, 80)],
    )
    .catch(() => undefined);
}

type Activity = {
  channel: ChannelName;
  last_inbound: Date | string | null;
  last_outbound: Date | string | null;
  backlog: number;
  failed: number;
  ambiguous: number;
  rejected: number;
  last_rejection: string | null;
};

const toDate = (value: Date | string | null) => (value ? new Date(value) : null);

/**
 * Each channel: configured or not, how it receives, the webhook URL to register, problems,
 * last inbound and outbound, the outbox backlog and failures, and refused webhooks.
 */
export async function channelsStatus(
  db: Queryable,
  config: ResolvedConfig,
  live: {
    configured: ChannelName[];
    modes: Partial<Record<ChannelName, ChannelMode>>;
    problems: Partial<Record<ChannelName, string[]>>;
  },
): Promise<ChannelStatus[]> {
  const rows = await db.query<Activity>(
    `SELECT c.channel,
       (SELECT max(received_at) FROM inbound_messages i WHERE i.channel = c.channel) AS last_inbound,
       (SELECT max(sent_at) FROM outbox_messages o WHERE o.channel = c.channel) AS last_outbound,
       (SELECT count(*)::int FROM outbox_messages o WHERE o.channel = c.channel AND o.status IN ('pending', 'sending')) AS backlog,
       (SELECT count(*)::int FROM outbox_messages o WHERE o.channel = c.channel AND o.status = 'failed') AS failed,
       (SELECT count(*)::int FROM outbox_messages o WHERE o.channel = c.channel AND o.status = 'ambiguous') AS ambiguous,
       (SELECT COALESCE(sum(count), 0)::int FROM webhook_rejections w WHERE w.channel = c.channel) AS rejected,
       (SELECT w.reason || ' at ' || to_char(w.last_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC'
          FROM webhook_rejections w WHERE w.channel = c.channel ORDER BY w.last_at DESC LIMIT 1) AS last_rejection
     FROM unnest($1::text[]) AS c(channel)`,
    [[...CHANNEL_NAMES]],
  );
  const publicUrl = channelsPublicUrl(config);
  return CHANNEL_NAMES.map((channel) => {
    const row = rows.find((candidate) => candidate.channel === channel);
    const configured = live.configured.includes(channel);
    const mode = configured ? (live.modes[channel] ?? 'webhook') : null;
    const webhookPath = WEBHOOK_PATHS[channel];
    return {
      channel,
      configured,
      mode,
      webhookUrl:
        publicUrl && webhookPath && (mode === 'webhook' || mode === null)
          ? `${publicUrl}${webhookPath}`
          : null,
      problems: live.problems[channel] ?? [],
      lastInboundAt: toDate(row?.last_inbound ?? null),
      lastOutboundAt: toDate(row?.last_outbound ?? null),
      backlog: row?.backlog ?? 0,
      failed: row?.failed ?? 0,
      ambiguous: row?.ambiguous ?? 0,
      rejected: row?.rejected ?? 0,
      lastRejection: row?.last_rejection ?? null,
    };
  });
}
