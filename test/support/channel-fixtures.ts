import { readFileSync } from 'node:fs';

/** A recorded platform payload from test/support/fixtures/<channel>/<name>.json, parsed afresh. */
export function fixture<T = Record<string, unknown>>(channel: string, name: string): T {
  return JSON.parse(
    readFileSync(new URL(`./fixtures/${channel}/${name}.json`, import.meta.url), 'utf8'),
  ) as T;
}

type TelegramMessageOverrides = {
  updateId?: number;
  messageId?: number;
  fromId?: number;
  chatId?: number;
  text?: string;
};

/** A private-chat Telegram update (fixture `private-text`) with the given ids and text. */
export function telegramText(
  overrides: TelegramMessageOverrides = {},
): Record<string, unknown> & { update_id: number } {
  const update = fixture<{
    update_id: number;
    message: { message_id: number; text?: string; from: { id: number }; chat: { id: number } };
  }>('telegram', 'private-text');
  if (overrides.updateId !== undefined) update.update_id = overrides.updateId;
  if (overrides.messageId !== undefined) update.message.message_id = overrides.messageId;
  if (overrides.fromId !== undefined) {
    update.message.from.id = overrides.fromId;
    update.message.chat.id = overrides.chatId ?? overrides.fromId;
  }
  if (overrides.chatId !== undefined) update.message.chat.id = overrides.chatId;
  if (overrides.text !== undefined) update.message.text = overrides.text;
  return update;
}

/**
 * A copy of `payload` with the field at `path` (dot-separated, array indexes as numbers) set
 * to `value`: the wrong-typed variants of the recorded payloads.
 */
export function withField<T extends object>(payload: T, path: string, value: unknown): T {
  const copy = structuredClone(payload) as Record<string, unknown>;
  const keys = path.split('.');
  let target = copy;
  for (const key of keys.slice(0, -1)) target = target[key] as Record<string, unknown>;
  target[keys.at(-1)!] = value;
  return copy as T;
}
