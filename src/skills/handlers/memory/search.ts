import { z } from 'zod';
import { MAX_SEARCH_LIMIT, MEMORY_CATEGORIES, RECALL_SOURCES, searchRecall } from '../../../memory/index.ts';
import { flag } from '../../flags.ts';
import { defineHandler, fail, ok } from '../../types.ts';
import { formatMemoryLine, formatMessageLine } from './format.ts';

export const searchMemoriesHandler = defineHandler({
  name: 'memory.search',
  flags: z
    .object({
      query: flag.string(),
      source: flag.enum(RECALL_SOURCES).default('all'),
      tags: flag.list().optional(),
      category: flag.enum(MEMORY_CATEGORIES).optional(),
      min_importance: flag.number({ min: 0, max: 1 }).optional(),
      limit: flag.int({ min: 1, max: MAX_SEARCH_LIMIT }).default(10),
    })
    .strict(),
  async execute(flags, ctx) {
    ctx.signal.throwIfAborted();
    const memoryFilters = [
      flags.tags && flags.tags.length > 0 ? '--tags' : null,
      flags.category ? '--category' : null,
      flags.min_importance !== undefined ? '--min-importance' : null,
    ].filter((name) => name !== null);
    if (flags.source === 'messages' && memoryFilters.length > 0) {
      return fail(
        `${memoryFilters.join(', ')} only apply to memories: drop ${memoryFilters.length === 1 ? 'it' : 'them'}, or search --source memories.`,
      );
    }
    const found = await searchRecall(
      ctx.services.database,
      ctx.user.id,
      {
        query: flags.query,
        source: flags.source,
        tags: flags.tags,
        category: flags.category,
        minImportance: flags.min_importance,
        limit: flags.limit,
      },
      {
        embedder: ctx.services.embedder,
        signal: ctx.signal,
        now: ctx.now(),
        timeZone: ctx.user.timezone,
        excludeTurnId: ctx.turnId,
      },
    );
    const how =
      found.mode === 'hybrid' ? '(hybrid: full text + vectors)' : `(full text only: ${found.fullTextReason})`;
    const filters = [`"${flags.query}"`];
    if (flags.source !== 'all') filters.push(`${flags.source} only`);
    if (flags.category) filters.push(`category ${flags.category}`);
    if (flags.tags && flags.tags.length > 0) filters.push(`any tag of ${flags.tags.join(', ')}`);
    if (flags.min_importance !== undefined) filters.push(`importance ≥ ${flags.min_importance}`);
    const memories = found.results.flatMap((hit) => (hit.kind === 'memory' ? [hit.memory] : []));
    const messages = found.results.flatMap((hit) => (hit.kind === 'message' ? [hit.message] : []));
    const metadata = {
      ids: found.results.map((hit) => (hit.kind === 'memory' ? hit.memory.id : `message:${hit.message.id}`)),
      count: found.results.length,
      mode: found.mode,
      memories,
      messages,
    };
    if (found.results.length === 0) {
      const what =
        flags.source === 'messages'
          ? 'messages'
          : found.searchedMessages
            ? 'memories or messages'
            : 'memories';
      return ok(`No ${what} match ${filters.join(' · ')} ${how}. Try other words, or fewer filters.`, {
        metadata,
      });
    }
    const count =
      messages.length === 0
        ? plural(memories.length, 'memory', 'memories')
        : memories.length === 0
          ? plural(messages.length, 'message', 'messages')
          : `${found.results.length} results (${plural(memories.length, 'memory', 'memories')}, ${plural(messages.length, 'message', 'messages')})`;
    const lines = found.results.map((hit) =>
      hit.kind === 'memory'
        ? formatMemoryLine(hit.memory)
        : formatMessageLine(hit.message, ctx.user.timezone),
    );
    return ok([`${count}, best first, for ${filters.join(' · ')} ${how}:`, ...lines].join('\n'), {
      metadata,
    });
  },
});

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;
