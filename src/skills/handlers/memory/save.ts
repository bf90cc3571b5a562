import { z } from 'zod';
import { MEMORY_CATEGORIES, saveMemory } from '../../../memory/index.ts';
import { flag } from '../../flags.ts';
import { defineHandler, ok } from '../../types.ts';
import { formatMemoryLine } from './format.ts';

/** A memory is one statement; a document belongs in files. */
const MAX_CONTENT_CHARS = 2_000;

export const saveMemoryHandler = defineHandler({
  name: 'memory.save',
  flags: z
    .object({
      content: flag.string().refine((value) => value.length <= MAX_CONTENT_CHARS, {
        message: `must be at most ${MAX_CONTENT_CHARS} characters: save one self-contained statement`,
      }),
      tags: flag.list().optional(),
      category: flag.enum(MEMORY_CATEGORIES).default('fact'),
      importance: flag.number({ min: 0, max: 1 }).default(0.5),
    })
    .strict(),
  async execute(flags, ctx) {
    ctx.signal.throwIfAborted();
    const { memory, merged } = await saveMemory(
      ctx.services.database,
      ctx.user.id,
      {
        content: flags.content,
        category: flags.category,
        tags: flags.tags ?? [],
        importance: flags.importance,
        sourceType: ctx.agentId ? 'agent' : 'user',
        conversationId: ctx.conversationId,
      },
      { now: ctx.now() },
    );
    const content = merged
      ? `Merged with an existing memory ${memory.id} (tags combined, higher importance kept):\n${formatMemoryLine(memory)}`
      : `Saved ${formatMemoryLine(memory)}`;
    return ok(content, {
      metadata: { id: memory.id, ids: [memory.id], merged, memory },
      receipt: `${memory.content} (${memory.id}${merged ? ', merged' : ''})`,
    });
  },
});
