import type { ChannelMode, ResolvedConfig } from '../config/index.ts';
import type { Database } from '../db/index.ts';
import { RefusedError } from '../errors.ts';
import {
  type Conversation,
  conversationFromJson,
  createConversation,
  getConversation,
  latestConversation,
  latestConversationJsonSql,
} from '../memory/index.ts';
import { unstorableCharacter } from '../skills/index.ts';
import { ensureUser, ensureUserWith, type User } from '../users/index.ts';

/** What a message names of where it goes (a subset of TurnInput). */
export type MessageAddress = {
  userId: string;
  channel: string;
  conversationId?: string | undefined;
  newConversation?: boolean | undefined;
};

/** Why a message cannot be taken as it is, or null. Says how to fix it. */
export function messageProblem(text: string, maxChars: number): string | null {
  if (!text.trim()) return 'The message is empty: send some text.';
  if (text.length > maxChars) {
    return `The message is ${text.length} characters long; the limit is ${maxChars} (limits.max_message_chars). Send it in shorter parts, or save it as a file and refer to it.`;
  }
  const bad = unstorableCharacter(text);
  if (bad)
    return `The message contains ${bad.what} at character ${bad.index + 1}; remove it and send it again.`;
  return null;
}

/**
 * The message's user (created on first contact) and, when the message goes to the user's latest
 * conversation on its channel (the usual case), that conversation read in the same round trip
 * (`latest`: null when there is none yet, undefined when it was not read).
 */
export async function userOfMessage(
  database: Database,
  address: MessageAddress,
): Promise<{ user: User; latest: Conversation | null | undefined }> {
  if (address.conversationId || address.newConversation) {
    return { user: await ensureUser(database, address.userId), latest: undefined };
  }
  const { user, alongside } = await ensureUserWith(database, address.userId, {
    sql: latestConversationJsonSql(1, 2),
    params: [address.channel],
  });
  return { user, latest: conversationFromJson(alongside) };
}

/**
 * The conversation a message goes to: the one it names (it must be the user's), a new one, or
 * the user's latest on its channel, which userOfMessage read.
 */
export async function conversationOfMessage(
  database: Database,
  user: User,
  address: MessageAddress,
  latest: Conversation | null | undefined,
): Promise<Conversation> {
  if (address.conversationId) {
    const found = await getConversation(database, user.id, address.conversationId);
    if (!found) {
      throw new RefusedError(
        'conversation_not_found',
        `No conversation ${address.conversationId} for user ${user.id}.`,
      );
    }
    return found;
  }
  if (address.newConversation) return createConversation(database, user.id, address.channel);
  if (latest) return latest;
  // None yet (or not read): found or created under a lock, so a user's first messages arriving
  // at two instances at once start one conversation, not two.
  return database.withAdvisoryLock(`first-conversation:${user.id}:${address.channel}`, () =>
    latestConversation(database, user.id, address.channel),
  );
}

/** The agent mode a turn runs in: the conversation's own, else the channel's, else the default. */
export function turnMode(
  config: ResolvedConfig,
  conversation: Conversation,
  channel: string,
  voice: boolean,
): ChannelMode {
  if (voice) return config.channels.modes.voice ?? 'single_loop';
  if (
    conversation.mode === 'multi_agent' ||
    conversation.mode === 'single_loop' ||
    conversation.mode === 'direct'
  ) {
    return conversation.mode;
  }
  return config.channels.modes[channel] ?? (channel === 'voice' ? 'single_loop' : 'multi_agent');
}
