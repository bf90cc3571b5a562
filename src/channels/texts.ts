import type { PairingRequest } from './pairing.ts';

/* What Steward says on its own (not through the model) on a chat channel. */

export function pairingText(request: PairingRequest): string {
  return [
    "Hi! I'm Steward, a personal assistant, and I don't know you yet.",
    `Your pairing code is **${request.code}** (valid for one hour).`,
    `Ask the owner to run \`steward pairing approve ${request.code}\`; I'll greet you here once they have.`,
  ].join('\n\n');
}

export const GREETING_TEXT =
  "You're approved: I'm Steward, your assistant. Ask me anything, or tell me what to keep track of. Send /help to see what I understand.";

export const HELP_TEXT = [
  "I'm Steward. Write to me as you would to a person: I can keep tasks, remember things and answer questions.",
  'You can also send voice notes (where the app has them); /transcript shows what I heard in your last one.',
  '/new starts a fresh conversation; /help shows this.',
].join('\n\n');

export const NEW_CONVERSATION_TEXT = 'Started a new conversation. What can I do for you?';

export const UNSUPPORTED_TEXT = 'I can only read text messages here for now. Please write it out for me.';

/** A reply with no text (never "Done.": nothing says anything was done). */
export const NOTHING_TO_SAY = 'I got no answer for this message.';

export const INTERRUPTED_TEXT =
  'I was interrupted (Steward restarted) while working on this. Reply "continue" to finish it.';
