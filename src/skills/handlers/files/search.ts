import { z } from 'zod';
import { displayPath, searchContent } from '../../../files/index.ts';
import { fenceExternal } from '../../external.ts';
import { flag } from '../../flags.ts';
import { defineHandler, ok } from '../../types.ts';
import { limitNote } from '../limit-note.ts';
import { fenceFile, filesOf, isResult } from './shared.ts';

export const searchFilesHandler = defineHandler({
  name: 'files.search',
  flags: z
    .object({
      query: flag.string(),
      scope: flag.enum(['files', 'skills', 'all']).optional(),
      limit: flag.int({ min: 1, max: 50 }).optional(),
    })
    .strict(),
  async execute(flags, ctx) {
    const files = filesOf(ctx);
    if (isResult(files)) return files;
    if (flags.scope === 'skills' || flags.scope === 'all') await files.refreshSkillIndex();
    const limit = flags.limit ?? 10;
    const matches = await searchContent(files.database, ctx.user.id, flags.query, {
      scope: flags.scope ?? 'files',
      limit,
    });
    if (matches.length === 0)
      return ok(
        `No ${flags.scope === 'skills' ? 'skill pages' : 'files'} match "${flags.query}". Try other words, or files.list to browse.`,
        { metadata: { count: 0, matches: [] } },
      );
    const blocks = matches.map((match, index) => {
      const name = match.source === 'skill' ? `skill ${match.path}` : displayPath(match.path);
      const note = match.note ? ` (${match.note})` : '';
      const snippet = match.snippet
        ? `\n${match.source === 'skill' ? fenceExternal(`skill:${match.path}`, match.snippet) : fenceFile(match.path, match.snippet)}`
        : '';
      return `${index + 1}. ${name}${note}${snippet}`;
    });
    return ok(
      `${matches.length} match${matches.length === 1 ? '' : 'es'} for "${flags.query}" (best first; matches in **bold**):\n${blocks.join('\n')}${limitNote(matches.length, limit, 50)}`,
      {
        metadata: {
          count: matches.length,
          limitReached: matches.length >= limit,
          matches: matches.map((match) => ({ source: match.source, path: match.path, kind: match.kind })),
        },
      },
    );
  },
});
