import { z } from 'zod';
import { flag } from '../../flags.ts';
import { defineHandler, ok } from '../../types.ts';
import { failWith, filesOf, isResult } from './shared.ts';
import { quote } from './write.ts';

export const deleteFileHandler = defineHandler({
  name: 'files.delete',
  flags: z.object({ path: flag.string() }).strict(),
  async execute(flags, ctx) {
    const files = filesOf(ctx);
    if (isResult(files)) return files;
    ctx.signal.throwIfAborted();
    const deleted = await files.vault(ctx.user.id).delete(flags.path);
    if (!deleted.ok) return failWith(deleted);
    const { path, archivedVersion } = deleted.value;
    await files.changed(ctx.user.id);
    return ok(
      `Archived ${path} as v${archivedVersion}; it no longer shows in files.list. Nothing was deleted: files.restore --path ${quote(path)} --version ${archivedVersion} brings it back.`,
      {
        sideEffects: [`archived file ${path}`],
        metadata: { path, archivedVersion },
        receipt: `${path} (archived as v${archivedVersion})`,
      },
    );
  },
});
