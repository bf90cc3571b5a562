import { z } from 'zod';
import { payloadProblem } from '../payload-problem.ts';

/*
 * The parts of a WhatsApp Cloud API webhook Steward reads, checked for their types. Unknown
 * fields pass through. Each message of a batch is checked on its own, so one that cannot be
 * used does not take the others with it.
 */

const message = z.looseObject({
  from: z.string(),
  id: z.string(),
  type: z.string(),
  text: z.looseObject({ body: z.string() }).optional(),
  audio: z
    .looseObject({ id: z.string(), mime_type: z.string().optional(), voice: z.boolean().optional() })
    .optional(),
});

const value = z.looseObject({
  contacts: z
    .array(
      z.looseObject({
        wa_id: z.string().optional(),
        profile: z.looseObject({ name: z.string().optional() }).optional(),
      }),
    )
    .optional(),
  messages: z.array(z.unknown()).optional(),
});

const payload = z.looseObject({
  object: z.string(),
  entry: z
    .array(
      z.looseObject({
        changes: z.array(z.looseObject({ field: z.string(), value: z.unknown() })).optional(),
      }),
    )
    .optional(),
});

export type WhatsAppMessage = z.infer<typeof message>;
export type WhatsAppContact = NonNullable<z.infer<typeof value>['contacts']>[number];

/**
 * Every message of a `messages` webhook with the sender's contacts, and a problem line for
 * each part Steward cannot use (fields and expected types, never values). Other objects and
 * fields (statuses, account updates) give nothing.
 */
export function parseWhatsAppPayload(json: unknown): {
  messages: Array<{ message: WhatsAppMessage; contacts: WhatsAppContact[] }>;
  problems: string[];
} {
  const messages: Array<{ message: WhatsAppMessage; contacts: WhatsAppContact[] }> = [];
  const problems: string[] = [];
  const parsed = payload.safeParse(json ?? {});
  if (!parsed.success) return { messages, problems: [payloadProblem(parsed.error)] };
  if (parsed.data.object !== 'whatsapp_business_account') return { messages, problems };
  for (const [entryIndex, entry] of (parsed.data.entry ?? []).entries()) {
    for (const [changeIndex, change] of (entry.changes ?? []).entries()) {
      if (change.field !== 'messages') continue;
      const where = `entry.${entryIndex}.changes.${changeIndex}.value`;
      const checked = value.safeParse(change.value ?? {});
      if (!checked.success) {
        problems.push(payloadProblem(checked.error, where));
        continue;
      }
      for (const [index, raw] of (checked.data.messages ?? []).entries()) {
        const one = message.safeParse(raw);
        if (one.success) messages.push({ message: one.data, contacts: checked.data.contacts ?? [] });
        else problems.push(payloadProblem(one.error, `${where}.messages.${index}`));
      }
    }
  }
  return { messages, problems };
}
