export { channelApiRoutes, parseIdentity } from './api-routes.ts';
export { INBOUND_JOB } from './chat-dispatcher.ts';
export type { TurnHandler } from './chat-processor.ts';
export type { DeliveryTrouble } from './delivery-router.ts';
export {
  type DeliveryAttempt,
  type DeliveryReceipt,
  type DeliverySource,
  type DeliveryStatus,
  deliveryReceipts,
  deliverySummary,
  type InboxEntry,
  inboxOf,
  markInboxRead,
  recentDeliveries,
  unreadInboxCount,
} from './delivery-store.ts';
export { FailureLimiter } from './failure-limiter.ts';
export { type Delivery, Gateway, type GatewayDeps, type PairingApproval } from './gateway.ts';
export { type OutboxRow, type OutboxStatus, outboxBacklog, outboxRows } from './outbox.ts';
export {
  normalizePairingCode,
  PAIRING_ALPHABET,
  PAIRING_CODE_LENGTH,
  type PairingRequest,
  pendingPairings,
} from './pairing.ts';
export { probeWithin } from './probe.ts';
export { CHANNEL_SETUP, channelsPublicUrl, createChannelAdapters, WEBHOOK_PATHS } from './registry.ts';
export { type ChannelStatus, channelsStatus } from './status.ts';
export type {
  ChannelAdapter,
  ChannelCapabilities,
  ChannelName,
  ChannelProbe,
  InboundMessage,
  OutboundMessage,
  SendResult,
} from './types.ts';
export { CHANNEL_NAMES } from './types.ts';
export { webhookRoutes } from './webhook-routes.ts';
