import { z } from 'zod';
import { localMinute } from '../../../time/index.ts';
import { flag } from '../../flags.ts';
import { defineHandler, ok } from '../../types.ts';
import { cleanPath, failWith, filesOf, formatSize, isResult } from './shared.ts';

export const fileVersionsHandler = defineHandler({
  name: 'files.versions',
  flags: z.object({ path: flag.string() }).strict(),
  async execute(flags, ctx) {
    const files = filesOf(ctx);
    if (isResult(files)) return files;
    const path = cleanPath(flags.path);
    if (isResult(path)) return path;
    const listed = await files.vault(ctx.user.id).versions(path);
    if (!listed.ok) return failWith(listed);
    const versions = listed.value;
    const lines = versions.map(
      (item) =>
        `v${item.version} · ${formatSize(item.size)} · ${localMinute(item.savedAt, ctx.user.timezone)}${item.current ? ' · current' : ''}`,
    );
    const deleted = versions.every((item) => !item.current)
      ? ' It was deleted: every version is archived.'
      : '';
    return ok(
      `${path} has ${versions.length} version${versions.length === 1 ? '' : 's'}, oldest first:${deleted}\n${lines.join('\n')}`,
      {
        metadata: {
          count: versions.length,
          versions: versions.map((item) => ({
            version: item.version,
            size: item.size,
            current: item.current,
          })),
        },
      },
    );
  },
});
