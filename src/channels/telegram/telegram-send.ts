import { type Api, GrammyError, HttpError, InputFile } from 'grammy';
import type { Logger } from '../../logging/index.ts';
import { plainText } from '../markdown.ts';
import { httpFailure, networkFailure } from '../send-errors.ts';
import type { ChatMeta, OutboundMessage, SendResult } from '../types.ts';
import { BotApiAnswerError } from './bot-api-fetch.ts';
import { grammySignal } from './grammy-signal.ts';
import { telegramHtml } from './telegram-html.ts';

export type TelegramSender = { api: Api; botToken: string; logger: Logger };

const isParseError = (error: GrammyError) =>
  error.error_code === 400 &&
  /can't parse|parse entities|unsupported start tag|can't find end/i.test(error.description);

/**
 * Sends one outbox part: a voice note when it carries audio (its text when the chat refuses
 * voice), else the text as Telegram HTML, resent as plain text when Telegram cannot parse it.
 * Never throws: a failure is a `SendResult`, classified for the outbox's retries.
 */
export async function sendTelegram(
  sender: TelegramSender,
  message: OutboundMessage,
  signal: AbortSignal,
): Promise<SendResult> {
  const { api, logger } = sender;
  if (message.audio) {
    const voice = await sendVoice(sender, message, signal);
    // A chat that refuses voice messages (privacy settings) gets the text instead.
    if (voice.kind !== 'failed') return voice;
    logger.warn(
      { channel: 'telegram', err: voice.error },
      'telegram: voice message refused; sending the text',
    );
  }
  const common = { link_preview_options: { is_disabled: true }, ...placement(message.meta) };
  try {
    const sent = await api.sendMessage(
      message.chatId,
      telegramHtml(message.text),
      { ...common, parse_mode: 'HTML' },
      grammySignal(signal),
    );
    return { kind: 'sent', messageId: String(sent.message_id) };
  } catch (error) {
    if (!(error instanceof GrammyError && isParseError(error))) return failure(sender, error, 'sendMessage');
    logger.warn(
      { channel: 'telegram', err: error.description },
      'telegram: HTML refused; resending as plain text',
    );
  }
  try {
    const sent = await api.sendMessage(message.chatId, plainText(message.text), common, grammySignal(signal));
    return { kind: 'sent', messageId: String(sent.message_id) };
  } catch (error) {
    return failure(sender, error, 'sendMessage');
  }
}

/** Where in the chat a part goes: its forum topic, as a reply to the message it answers. */
function placement(meta: ChatMeta) {
  return {
    ...(meta.threadId ? { message_thread_id: Number(meta.threadId) } : {}),
    ...(meta.replyToMessageId
      ? {
          reply_parameters: {
            message_id: Number(meta.replyToMessageId),
            allow_sending_without_reply: true,
          },
        }
      : {}),
  };
}

async function sendVoice(
  sender: TelegramSender,
  message: OutboundMessage,
  signal: AbortSignal,
): Promise<SendResult> {
  const audio = message.audio!;
  try {
    const sent = await sender.api.sendVoice(
      message.chatId,
      new InputFile(audio.data, 'reply.ogg'),
      placement(message.meta),
      grammySignal(signal),
    );
    return { kind: 'sent', messageId: String(sent.message_id) };
  } catch (error) {
    return failure(sender, error, 'sendVoice');
  }
}

/**
 * A failed call as a SendResult. An HTTP answer is classified by its status — a gateway's
 * 5xx page is retried like the Bot API's own 5xx; only a request that got no answer (a
 * timeout, a reset) is of unknown outcome. The bot token never reaches the error.
 */
function failure(sender: TelegramSender, error: unknown, method: string): SendResult {
  const result = classify(error, `telegram ${method}`);
  return 'error' in result
    ? { ...result, error: result.error.replaceAll(sender.botToken, '<bot token>') }
    : result;
}

function classify(error: unknown, what: string): SendResult {
  if (error instanceof GrammyError)
    return httpFailure(error.error_code, error.description, error.parameters.retry_after);
  const cause = error instanceof HttpError ? error.error : error;
  if (cause instanceof BotApiAnswerError) {
    if (cause.status < 300) {
      return { kind: 'ambiguous', error: `${what}: ${cause.message}; it may have been delivered` };
    }
    return httpFailure(cause.status, `${what}: ${cause.summary}`, cause.retryAfterSeconds);
  }
  return networkFailure(cause, what);
}
