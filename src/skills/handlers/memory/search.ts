import { z } from 'zod';
import { MAX_SEARCH_LIMIT, MEMORY_CATEGORIES, searchMemories } from '../../../memory/index.ts';
import { flag } from '../../flags.ts';
import { defineHandler, ok } from '../../types.ts';
import { formatMemoryLine } from './format.ts';

export const searchMemoriesHandler = defineHandler({
  name: 'memory.search',
  flags: z
    .object({
      query: flag.string(),
      tags: flag.list().optional(),
      category: flag.enum(MEMORY_CATEGORIES).optional(),
      min_importance: flag.number({ min: 0, max: 1 }).optional(),
      limit: flag.int({ min: 1, max: MAX_SEARCH_LIMIT }).default(10),
    })
    .strict(),
  async execute(flags, ctx) {
    ctx.signal.throwIfAborted();
    const found = await searchMemories(
      ctx.services.database,
      ctx.user.id,
      {
        query: flags.query,
        tags: flags.tags,
        category: flags.category,
        minImportance: flags.min_importance,
        limit: flags.limit,
      },
      { embedder: ctx.services.embedder, signal: ctx.signal, now: ctx.now() },
    );
    const how =
      found.mode === 'hybrid' ? '(hybrid: full text + vectors)' : `(full text only: ${found.fullTextReason})`;
    const filters = [`"${flags.query}"`];
    if (flags.category) filters.push(`category ${flags.category}`);
    if (flags.tags && flags.tags.length > 0) filters.push(`any tag of ${flags.tags.join(', ')}`);
    if (flags.min_importance !== undefined) filters.push(`importance ≥ ${flags.min_importance}`);
    const memories = found.results.map((hit) => hit.memory);
    const metadata = {
      ids: memories.map((memory) => memory.id),
      count: memories.length,
      mode: found.mode,
      memories,
    };
    if (memories.length === 0) {
      return ok(`No memories match ${filters.join(' · ')} ${how}. Try other words, or fewer filters.`, {
        metadata,
      });
    }
    const count = `${memories.length} ${memories.length === 1 ? 'memory' : 'memories'}`;
    return ok(
      [`${count}, best first, for ${filters.join(' · ')} ${how}:`, ...memories.map(formatMemoryLine)].join(
        '\n',
      ),
      {
        metadata,
      },
    );
  },
});
