import { z } from 'zod';
import { flag } from '../../flags.ts';
import { defineHandler, ok } from '../../types.ts';
import { failWith, filesOf, isResult } from './shared.ts';

export const restoreFileHandler = defineHandler({
  name: 'files.restore',
  flags: z.object({ path: flag.string(), version: flag.int({ min: 1 }) }).strict(),
  async execute(flags, ctx) {
    const files = filesOf(ctx);
    if (isResult(files)) return files;
    ctx.signal.throwIfAborted();
    const restored = await files.vault(ctx.user.id).restore(flags.path, flags.version);
    if (!restored.ok) return failWith(restored);
    const report = restored.value;
    if (report.archivedVersion === null && !report.created && report.version === report.restoredVersion)
      return ok(`v${report.restoredVersion} is already the current version of ${report.path}.`, {
        metadata: { ...report },
      });
    await files.changed(ctx.user.id);
    const archived =
      report.archivedVersion === null
        ? ''
        : ` The content it replaced is archived as v${report.archivedVersion}.`;
    return ok(
      `Restored ${report.path} to the content of v${report.restoredVersion}; it is now v${report.version}.${archived}`,
      {
        filesProduced: [report.path],
        sideEffects: [`restored file ${report.path} to v${report.restoredVersion}`],
        metadata: { ...report },
        receipt: `${report.path} (v${report.restoredVersion} restored as v${report.version})`,
      },
    );
  },
});
