import { z } from 'zod';
import { withoutUnsafeCharacters } from '../../../files/index.ts';
import { flag } from '../../flags.ts';
import { defineHandler, fail, ok } from '../../types.ts';
import { cleanPath, filesOf, formatSize, isResult } from '../files/shared.ts';
import { integrationsOf, withProvider } from '../provider-call.ts';

const DEFAULT_FOLDER = 'email-attachments';

/**
 * A sender's file name as a name inside the vault: its last segment only, without control
 * characters or characters that are awkward in paths; `fallback` when nothing usable is left.
 */
export function attachmentFileName(filename: string, fallback: string): string {
  // Bidirectional-text controls could disguise the name (`evil\u202Edm.exe`); the vault refuses them.
  const last = withoutUnsafeCharacters(filename.replace(/\\/g, '/').split('/').pop() ?? '');
  const cleaned = [...last]
    .filter((char) => char.charCodeAt(0) >= 32 && char.charCodeAt(0) !== 127 && !'<>:"|?*'.includes(char))
    .join('')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 150);
  return cleaned && !/^\.+$/.test(cleaned) && !cleaned.startsWith('.') ? cleaned : fallback;
}

export const saveAttachmentsHandler = defineHandler({
  name: 'email.save_attachments',
  flags: z
    .object({ id: flag.string(), name: flag.string().optional(), folder: flag.string().optional() })
    .strict(),
  async execute(flags, ctx) {
    const files = filesOf(ctx);
    if (isResult(files)) return files;
    const folder = cleanPath(flags.folder ?? DEFAULT_FOLDER);
    if (isResult(folder)) return folder;
    return withProvider(integrationsOf(ctx).email(ctx.user.id), async (email) => {
      const attachments = await email.attachments(flags.id, ctx.signal);
      if (!attachments)
        return fail(`No message with id ${flags.id} in ${email.name}. Find ids with email.search.`);
      const wanted = flags.name
        ? attachments.filter((item) =>
            [item.filename, attachmentFileName(item.filename, '')].some(
              (name) => name.toLowerCase() === flags.name!.toLowerCase(),
            ),
          )
        : attachments;
      if (attachments.length === 0) return fail(`Message ${flags.id} has no attachments.`);
      if (wanted.length === 0)
        return fail(
          `Message ${flags.id} has no attachment named "${flags.name}"; it has: ${attachments.map((item) => item.filename).join(', ')}.`,
        );
      const vault = files.vault(ctx.user.id);
      const saved: string[] = [];
      for (const [index, attachment] of wanted.entries()) {
        const name = attachmentFileName(attachment.filename, `attachment-${index + 1}`);
        const target = cleanPath(`${folder}/${name}`);
        if (isResult(target)) return target;
        const written = await vault.write(target, attachment.content);
        if (!written.ok) return fail(`Could not save ${attachment.filename}: ${written.message}`);
        saved.push(`${written.value.path} (${formatSize(attachment.content.length)})`);
      }
      await files.changed(ctx.user.id);
      return ok(
        `Saved ${saved.length} attachment${saved.length === 1 ? '' : 's'} of [${flags.id}] into the user's files: ${saved.join(', ')}. Read them with files.read --path PATH.`,
        {
          filesProduced: saved.map((entry) => entry.replace(/ \([^)]*\)$/, '')),
          sideEffects: saved.map((entry) => `saved email attachment ${entry}`),
          metadata: { id: flags.id, saved },
          receipt: `${saved.length} from ${flags.id}: ${saved.map((entry) => entry.replace(/ \([^)]*\)$/, '')).join(', ')}`,
        },
      );
    });
  },
});
