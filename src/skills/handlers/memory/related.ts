import { z } from 'zod';
import { ENTITY_KINDS, type Entity, type EntityRelation, relatedToEntity } from '../../../memory/index.ts';
import { flag } from '../../flags.ts';
import { defineHandler, ok } from '../../types.ts';
import { formatMemoryLine } from './format.ts';

const describe = (entity: Entity) => `${entity.name} (${entity.kind})`;

/** `Alice works at Contoso (organization)` or `Bob (person) manages Alice`. */
const relationLine = (entity: Entity, relation: EntityRelation) =>
  relation.direction === 'outgoing'
    ? `- ${entity.name} ${relation.relation} ${describe(relation.other)}`
    : `- ${describe(relation.other)} ${relation.relation} ${entity.name}`;

export const relatedMemoriesHandler = defineHandler({
  name: 'memory.related',
  flags: z
    .object({
      entity: flag.string(),
      kind: flag.enum(ENTITY_KINDS).optional(),
    })
    .strict(),
  async execute(flags, ctx) {
    ctx.signal.throwIfAborted();
    const found = await relatedToEntity(ctx.services.database, ctx.user.id, flags.entity, {
      kind: flags.kind,
    });
    if (!found) {
      const kind = flags.kind ? ` of kind ${flags.kind}` : '';
      return ok(
        `No entity named "${flags.entity}"${kind} is known. Entities are recorded from saved memories; ` +
          `try memory.search --query "${flags.entity}".`,
        { metadata: { found: false, ids: [], count: 0 } },
      );
    }
    const { entity, relations, memories, otherMatches } = found;
    const lines = [describe(entity)];
    if (relations.length > 0)
      lines.push(`Relations (${relations.length}):`, ...relations.map((r) => relationLine(entity, r)));
    else lines.push('No relations recorded.');
    if (memories.length > 0) {
      lines.push(
        `Memories mentioning ${entity.name} (${memories.length}):`,
        ...memories.map(formatMemoryLine),
      );
    } else lines.push(`No memories mention ${entity.name}.`);
    if (otherMatches.length > 0) {
      lines.push(
        `Also matching "${flags.entity}": ${otherMatches.map(describe).join(', ')}. Give the full name or --kind to pick one.`,
      );
    }
    return ok(lines.join('\n'), {
      metadata: {
        found: true,
        entity,
        relations,
        ids: memories.map((memory) => memory.id),
        count: memories.length,
      },
    });
  },
});
