import { z } from 'zod';
import { flag } from '../../flags.ts';
import { defineHandler, ok } from '../../types.ts';
import { failWith, filesOf, isResult } from './shared.ts';
import { quote } from './write.ts';

export const moveFileHandler = defineHandler({
  name: 'files.move',
  flags: z.object({ path: flag.string(), to: flag.string() }).strict(),
  async execute(flags, ctx) {
    const files = filesOf(ctx);
    if (isResult(files)) return files;
    ctx.signal.throwIfAborted();
    // A trailing slash means "into this folder", even one that does not exist yet.
    const to = flags.to.endsWith('/')
      ? `${flags.to}${flags.path.split('/').filter(Boolean).at(-1) ?? ''}`
      : flags.to;
    const moved = await files.vault(ctx.user.id).move(flags.path, to);
    if (!moved.ok) return failWith(moved);
    const report = moved.value;
    await files.changed(ctx.user.id);
    const lines = [`Moved ${report.from} to ${report.to}.`];
    if (report.archivedVersion !== null)
      lines.push(
        `The file that was at ${report.to} is archived as v${report.archivedVersion}: files.restore --path ${quote(report.to)} --version ${report.archivedVersion} brings it back.`,
      );
    if (!report.historyMoved)
      lines.push(
        `Earlier versions stay listed under ${report.from} (files.versions --path ${quote(report.from)}).`,
      );
    return ok(lines.join(' '), {
      filesProduced: [report.to],
      sideEffects: [`moved file ${report.from} to ${report.to}`],
      metadata: { ...report },
      receipt: `${report.from} → ${report.to}`,
    });
  },
});
