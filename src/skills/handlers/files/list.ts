import { z } from 'zod';
import { displayPath } from '../../../files/index.ts';
import { localMinute } from '../../../time/index.ts';
import { flag } from '../../flags.ts';
import { defineHandler, ok } from '../../types.ts';
import { failWith, filesOf, formatSize, isResult } from './shared.ts';

export const listFilesHandler = defineHandler({
  name: 'files.list',
  flags: z.object({ path: flag.string().optional() }).strict(),
  async execute(flags, ctx) {
    const files = filesOf(ctx);
    if (isResult(files)) return files;
    const listed = await files.vault(ctx.user.id).list(flags.path ?? '');
    if (!listed.ok) return failWith(listed);
    const entries = listed.value;
    const where = flags.path ? `${flags.path.replace(/\/+$/, '')}/` : 'your files';
    if (entries.length === 0)
      return ok(
        flags.path
          ? `${where} is empty.`
          : 'You have no files yet. Create one with files.write --path notes/example.md --content "…"',
        { metadata: { count: 0, entries: [] } },
      );
    // A name put in the vault by hand may hold characters that disguise it: shown as <U+202E>.
    const lines = entries.map((entry) =>
      entry.kind === 'folder'
        ? `${displayPath(entry.path)}/`
        : `${displayPath(entry.path)} · ${formatSize(entry.size)} · ${localMinute(entry.modifiedAt, ctx.user.timezone)}`,
    );
    return ok(`${entries.length} in ${where}:\n${lines.join('\n')}`, {
      metadata: {
        count: entries.length,
        entries: entries.map((entry) => ({ path: entry.path, kind: entry.kind, size: entry.size })),
      },
    });
  },
});
