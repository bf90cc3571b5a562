import type { Hono } from 'hono';

import { CHANNEL_NAMES, type ChannelName } from '../config/index.ts';

export { CHANNEL_NAMES, type ChannelName };

/** How a channel's messages arrive (see ChannelAdapter.mode). */
export type ChannelMode = 'webhook' | 'polling' | 'socket';

/** What a channel can do, so the gateway never asks for more; a flag left out is false. */
export type ChannelCapabilities = {
  /** Longest text one message may carry; longer replies are split on paragraph boundaries. */
  maxLength: number;
  /** Shows "typing…" while a turn runs. */
  typingIndicator?: boolean;
  /** Sends voice messages (spoken replies). */
  voice?: boolean;
  attachments?: boolean;
  /**
   * A stranger is told their pairing code once, never again however often they write (email,
   * where answering every message could feed a loop). Default: the code is repeated.
   */
  pairingReplyOnce?: boolean;
};

/** Anything a channel needs to reply in the right place (thread, quoted message, group). */
export type ChatMeta = {
  threadId?: string;
  replyToMessageId?: string;
  /** The chat is a group or channel (not a one-to-one conversation). */
  group?: boolean;
  /** Email: the thread's subject, and its Message-ID chain (`References`) up to the message answered. */
  subject?: string;
  references?: string[];
};

/** A platform's reference to a voice note, to download it when the message is processed. */
export type InboundMedia = {
  /** Telegram's file_id, WhatsApp's media id. */
  id: string;
  mimeType?: string | null;
  /** Length as the platform says (refused before downloading when over the limit). */
  seconds?: number | null;
  bytes?: number | null;
};

/** One message from a platform, normalized; stored before the webhook is acknowledged. */
export type InboundMessage = {
  channel: ChannelName;
  /** Unique per channel: a redelivery carries the same id and is dropped. */
  channelMessageId: string;
  /** Where replies go (a chat, a Slack channel or DM, a phone number, a Chat space). */
  chatId: string;
  senderId: string;
  senderName?: string | null;
  /**
   * `command`: a bot command such as /start; `voice`: a voice note (`media`), transcribed when
   * processed; `unsupported`: nothing Steward can read (a sticker).
   */
  kind: 'text' | 'command' | 'unsupported' | 'voice';
  text: string;
  meta: ChatMeta;
  media?: InboundMedia | null;
};

export type StoredInbound = InboundMessage & {
  id: number;
  status: 'received' | 'processing' | 'done' | 'pairing' | 'failed';
  userId: string | null;
  attempts: number;
  receivedAt: Date;
  /** What a voice note said, once transcribed. */
  transcript: string | null;
};

/** Audio to send as a voice message (Ogg/Opus). */
export type OutboundAudio = { data: Uint8Array; contentType: string };

/** One part of a reply, ready to send. `text` is markdown; the adapter formats it for the channel. */
export type OutboundMessage = {
  outboxId: number;
  inboundId: number | null;
  chatId: string;
  /** With `audio`: the text sent instead if the platform refuses the voice message. */
  text: string;
  meta: ChatMeta;
  /** A spoken reply: sent as a voice message (channels whose capabilities include voice). */
  audio?: OutboundAudio | null;
};

/**
 * The outcome of one send, as a value. `sent` needs the platform's message id (null only when
 * the reply travelled inside the webhook's own response); `retry` means nothing was delivered;
 * `ambiguous` means the request may have arrived (a timeout after it left): never resent.
 */
export type SendResult =
  | { kind: 'sent'; messageId: string | null }
  | { kind: 'retry'; error: string; retryAfterMs?: number }
  | { kind: 'failed'; error: string }
  | { kind: 'ambiguous'; error: string };

/** What the gateway offers the adapters: storing what came in, and waiting for replies. */
export type GatewayPort = {
  /**
   * Stores the message and queues its processing. Returns the stored id, or null for a
   * redelivery (already stored). Throws only when the database is down (the platform retries).
   */
  receive(message: InboundMessage): Promise<{ id: number; duplicate: boolean }>;
  now(): Date;
};

/**
 * Answer a webhook handler gives back to the route (status and body). `dropped`: the request
 * was acknowledged but (part of) it could not be used; the reason is logged and counted, so it
 * must say where and what was wrong, never repeat the values sent.
 */
export type WebhookAnswer = (
  | { status: number; json: unknown }
  | { status: number; text: string }
  | { status: number; empty: true }
) & { dropped?: string };

/**
 * A chat platform. `routes` serves its webhooks (every one verified before anything in it is
 * read); `send` must not throw for platform failures: it returns them as a SendResult.
 */
export interface ChannelAdapter {
  readonly name: ChannelName;
  readonly capabilities: ChannelCapabilities;
  /**
   * How messages arrive; default webhook. `polling`: Steward asks for them (Telegram without a
   * public URL, Matrix's /sync); `socket`: over a connection Steward keeps open (Discord's Gateway).
   */
  readonly mode?: ChannelMode;
  /**
   * Webhook routes, mounted under /webhooks; null or left out for a channel with none (Telegram
   * polling, Matrix /sync, Discord's Gateway, Signal, email).
   */
  routes?(gateway: GatewayPort, guard: WebhookGuard): Hono | null;
  send(message: OutboundMessage, signal: AbortSignal): Promise<SendResult>;
  /** Markdown to the channel's own markup (Telegram HTML, Slack mrkdwn…). */
  format(markdown: string): string;
  /** Shows the typing indicator once (the platform hides it after a few seconds). */
  typing?(chatId: string, meta: ChatMeta): Promise<void>;
  /**
   * Downloads a voice note. Throws when the platform cannot be reached or refuses (the message
   * is retried); the error never carries a token.
   */
  fetchMedia?(media: InboundMedia, signal: AbortSignal): Promise<Uint8Array>;
  /**
   * Where a direct message to this sender goes, when not learned from a conversation; null when
   * none can be made up (a Matrix room, a Google Chat space). Left out: the sender's id itself
   * (a Telegram private chat, a Slack DM by user id, a phone number, an address).
   */
  directChatId?(senderId: string): string | null;
  /** Background work (long polling, setWebhook). Failures are logged, never thrown. */
  start?(gateway: GatewayPort): Promise<void>;
  stop?(): Promise<void>;
  /** Settings this channel is missing or contradicting, each with what to set; left out: none. */
  problems?(): string[];
  /**
   * One harmless call with the configured credentials (Telegram getMe, Slack auth.test…) that
   * proves the platform answers and accepts them. Must not throw; never puts a secret in its text.
   */
  probe?(signal: AbortSignal): Promise<ChannelProbe>;
}

/**
 * What a probe found. A failure says what is wrong and the fix; `repair` is a safe fix Steward
 * can apply itself (re-registering its own webhook), run by `steward doctor --fix`.
 */
export type ChannelProbe =
  | { ok: true; detail: string }
  | {
      ok: false;
      problem: string;
      fix: string;
      repair?: { what: string; run(signal: AbortSignal): Promise<void> };
    };

/** The request as the guard hands it to a webhook handler: verified, body read within the limits. */
export type VerifiedRequest = {
  headers: Headers;
  url: URL;
  body: Uint8Array;
  /** The JSON body, parsed; undefined when it is not JSON (the handler decides). */
  json: unknown;
};

/** Verification of one webhook request, by the channel. */
export type WebhookVerifier = {
  /**
   * Checks what the headers alone can tell. `verified`: fully verified (a secret token, a JWT);
   * `signed`: a signature over the body is present and fresh and will be checked after reading;
   * a string: the reason for refusing (logged, never sent).
   */
  headers(headers: Headers, url: URL): Promise<'verified' | 'signed' | { refused: string }>;
  /** The status a refusal answers (default 401; WhatsApp's verify handshake wants 403). */
  refusedStatus?: number;
  /** For `signed` requests: checks the signature over the raw body. */
  body?(headers: Headers, body: Uint8Array): { refused: string } | null;
};

/** Wraps a webhook handler with the body limits, verification, failure rate limit and access log. */
export type WebhookGuard = (
  channel: ChannelName,
  verifier: WebhookVerifier,
  handler: (request: VerifiedRequest) => Promise<WebhookAnswer>,
) => (c: import('hono').Context) => Promise<Response>;
