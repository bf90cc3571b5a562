import { z } from 'zod';
import { flag } from '../../flags.ts';
import { defineHandler, ok } from '../../types.ts';
import { failWith, filesOf, formatSize, isResult } from './shared.ts';

export const writeFileHandler = defineHandler({
  name: 'files.write',
  flags: z.object({ path: flag.string(), content: flag.text() }).strict(),
  async execute(flags, ctx) {
    const files = filesOf(ctx);
    if (isResult(files)) return files;
    ctx.signal.throwIfAborted();
    const content = Buffer.from(flags.content, 'utf8');
    const written = await files.vault(ctx.user.id).write(flags.path, content);
    if (!written.ok) return failWith(written);
    const report = written.value;
    await files.changed(ctx.user.id);
    const text = report.created
      ? `Created ${report.path} (v${report.version}, ${formatSize(content.length)}).`
      : `Replaced ${report.path} (now v${report.version}, ${formatSize(content.length)}). The previous content is archived as v${report.archivedVersion}: files.restore --path ${quote(report.path)} --version ${report.archivedVersion} brings it back.`;
    return ok(text, {
      filesProduced: [report.path],
      sideEffects: [report.created ? `created file ${report.path}` : `replaced file ${report.path}`],
      metadata: { ...report },
      receipt: `${report.path} (v${report.version}${report.created ? ', new' : ''})`,
    });
  },
});

/** A path as a command argument: quoted when it holds spaces or quotes. */
export const quote = (value: string) =>
  /^[\w./@:-]+$/.test(value) ? value : `'${value.replace(/'/g, "'\\''")}'`;
