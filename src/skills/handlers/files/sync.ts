import { z } from 'zod';
import { displayPath } from '../../../files/index.ts';
import { defineHandler, fail, ok } from '../../types.ts';
import { failWith, filesOf, isResult } from './shared.ts';

export const syncFilesHandler = defineHandler({
  name: 'files.sync',
  flags: z.object({}).strict(),
  async execute(_flags, ctx) {
    const files = filesOf(ctx);
    if (isResult(files)) return files;
    const connection = await files.driveConnection(ctx.user.id);
    if (!connection)
      return fail(
        'Google Drive is not connected, so there is nothing to sync with. Connect it with `steward connect google`; your files here work without it.',
        { metadata: { code: 'not_connected' } },
      );
    const synced = await files.sync(ctx.user.id, connection, ctx.signal);
    if (!synced.ok) return failWith(synced);
    const report = synced.value;
    if (
      report.pulled.length +
        report.pushed.length +
        report.archivedHere.length +
        report.archivedInDrive.length >
      0
    )
      await files.changed(ctx.user.id);
    const lines = [`Synced with Google Drive folder "${report.folderName}".`];
    const list = (label: string, paths: string[]) => {
      if (paths.length > 0) lines.push(`${label} (${paths.length}): ${paths.join(', ')}`);
    };
    list('Pulled from Drive', report.pulled);
    list('Pushed to Drive as new revisions', report.pushed);
    list('Archived here (deleted in Drive)', report.archivedHere);
    list('Archived in Drive (deleted here)', report.archivedInDrive);
    for (const conflict of report.conflicts)
      lines.push(
        `Conflict: ${conflict.path} changed both here and in Drive. Both are kept: yours at ${conflict.path}, Drive's at ${conflict.conflictPath}. Delete the one you do not want (or move Drive's over yours), then sync again.`,
      );
    for (const skipped of report.skipped)
      lines.push(`Skipped ${displayPath(skipped.path)}: ${skipped.reason}`);
    if (lines.length === 1) lines.push(`Everything was already in sync (${report.unchanged} files).`);
    else lines.push(`${report.unchanged} files unchanged.`);
    return ok(lines.join('\n'), {
      filesProduced: report.pulled,
      sideEffects: [
        ...report.pulled.map((path) => `pulled ${path} from Drive`),
        ...report.pushed.map((path) => `pushed ${path} to Drive`),
        ...report.archivedHere.map((path) => `archived ${path} here`),
        ...report.archivedInDrive.map((path) => `archived ${path} in Drive`),
      ],
      metadata: { ...report },
      receipt: `${report.pulled.length} pulled, ${report.pushed.length} pushed, ${report.conflicts.length} conflicts`,
    });
  },
});
