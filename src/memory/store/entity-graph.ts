import type { Database, Queryable } from '../../db/index.ts';
import { StewardError } from '../../errors.ts';
import { MEMORY_COLUMNS, randomId, toMemory } from './rows.ts';
import { normalizeEntityName } from './text.ts';
import { ENTITY_KINDS, type Entity, type EntityKind, type Memory } from './types.ts';

export type EntityInput = { name: string; kind?: string };
export type RelationInput = { source: string; target: string; relation: string };

export type EntityRecord = {
  /** The memory that names the entities; it must be one of the user's live memories. */
  memoryId: string;
  conversationId?: string | null;
  entities: readonly EntityInput[];
  /** Between entity names; a name not in `entities` is looked up, or added as kind `other`. */
  relations?: readonly RelationInput[];
};

export type RecordedEntities = {
  entities: Entity[];
  /** Relations added by this call (already known ones are not counted). */
  relationsAdded: number;
  mentionsAdded: number;
};

export type EntityRelation = {
  relation: string;
  /** `outgoing`: entity → other; `incoming`: other → entity. */
  direction: 'outgoing' | 'incoming';
  other: Entity;
  memoryId: string | null;
};

export type RelatedToEntity = {
  entity: Entity;
  relations: EntityRelation[];
  /** Live memories that mention the entity, most important first. */
  memories: Memory[];
  /** Other entities the name matched (another kind, or a longer name containing it). */
  otherMatches: Entity[];
};

type Options = { now?: Date; randomId?: () => string };

/**
 * Adds the entities a memory names, the relations between them and a mention of each in the
 * memory; what is already recorded is left as it is. Entities are per user and matched by
 * normalized name and kind. Throws StewardError `memory_not_found` when `memoryId` is not
 * one of the user's live memories.
 */
export async function recordEntities(
  db: Database,
  userId: string,
  record: EntityRecord,
  options: Options = {},
): Promise<RecordedEntities> {
  const now = options.now ?? new Date();
  const nextId = options.randomId ?? (() => randomId('e'));
  return db.transaction(async (tx) => {
    const owned = await tx.query(
      'SELECT 1 FROM memory_entries WHERE id = $1 AND user_id = $2 AND archived_at IS NULL',
      [record.memoryId, userId],
    );
    if (owned.length === 0) {
      throw new StewardError('memory_not_found', `No memory ${record.memoryId} for this user.`);
    }
    const byName = new Map<string, Entity>();
    const involved = new Map<string, Entity>();
    for (const input of record.entities) {
      const entity = await upsertEntity(tx, userId, input.name, toKind(input.kind), now, nextId);
      if (!entity) continue;
      const key = normalizeEntityName(entity.name);
      if (!byName.has(key)) byName.set(key, entity);
      involved.set(entity.id, entity);
    }
    const resolve = async (name: string): Promise<Entity | null> => {
      const key = normalizeEntityName(name);
      if (!key) return null;
      const known = byName.get(key) ?? (await findEntities(tx, userId, key, { exact: true }))[0];
      const entity = known ?? (await upsertEntity(tx, userId, name, 'other', now, nextId));
      if (entity) byName.set(key, entity);
      return entity;
    };

    let relationsAdded = 0;
    for (const input of record.relations ?? []) {
      const relation = input.relation.toLowerCase().replace(/\s+/g, ' ').trim();
      const source = await resolve(input.source);
      const target = await resolve(input.target);
      if (!relation || !source || !target || source.id === target.id) continue;
      involved.set(source.id, source);
      involved.set(target.id, target);
      const added = await tx.query(
        `INSERT INTO entity_relations (user_id, source_entity_id, target_entity_id, relation, memory_id, created_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (source_entity_id, target_entity_id, relation) DO NOTHING
         RETURNING id`,
        [userId, source.id, target.id, relation, record.memoryId, now],
      );
      relationsAdded += added.length;
    }

    let mentionsAdded = 0;
    for (const entity of involved.values()) {
      const added = await tx.query(
        `INSERT INTO entity_mentions (user_id, entity_id, memory_id, conversation_id, created_at)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (entity_id, memory_id) DO NOTHING
         RETURNING id`,
        [userId, entity.id, record.memoryId, record.conversationId ?? null, now],
      );
      mentionsAdded += added.length;
    }
    return { entities: [...involved.values()], relationsAdded, mentionsAdded };
  });
}

/**
 * The user's entity called `name` (case and spacing ignored; else the best entity whose name
 * contains it), with its relations in both directions and the memories that mention it.
 * Null when the user has no such entity.
 */
export async function relatedToEntity(
  db: Database,
  userId: string,
  name: string,
  options: { kind?: EntityKind; limit?: number } = {},
): Promise<RelatedToEntity | null> {
  const key = normalizeEntityName(name);
  if (!key) return null;
  const matches = await findEntities(db, userId, key, { exact: false, kind: options.kind });
  const entity = matches[0];
  if (!entity) return null;

  const relationRows = await db.query(
    `SELECT r.id AS relation_id, r.relation, r.memory_id, 'outgoing' AS direction, o.id, o.name, o.kind
       FROM entity_relations r JOIN entities o ON o.id = r.target_entity_id
       WHERE r.user_id = $1 AND r.source_entity_id = $2
     UNION ALL
     SELECT r.id AS relation_id, r.relation, r.memory_id, 'incoming' AS direction, o.id, o.name, o.kind
       FROM entity_relations r JOIN entities o ON o.id = r.source_entity_id
       WHERE r.user_id = $1 AND r.target_entity_id = $2
     ORDER BY relation_id`,
    [userId, entity.id],
  );
  const relations = relationRows.map(
    (row): EntityRelation => ({
      relation: String(row.relation),
      direction: row.direction === 'incoming' ? 'incoming' : 'outgoing',
      other: { id: String(row.id), name: String(row.name), kind: toKind(String(row.kind)) },
      memoryId: (row.memory_id as string | null) ?? null,
    }),
  );
  const memoryRows = await db.query(
    `SELECT ${MEMORY_COLUMNS} FROM entity_mentions em JOIN memory_entries m ON m.id = em.memory_id
     WHERE em.user_id = $1 AND em.entity_id = $2 AND m.user_id = $1 AND m.archived_at IS NULL
     ORDER BY m.importance DESC, m.updated_at DESC, m.id
     LIMIT $3`,
    [userId, entity.id, Math.min(Math.max(Math.trunc(options.limit ?? 20), 1), 100)],
  );
  return { entity, relations, memories: memoryRows.map(toMemory), otherMatches: matches.slice(1) };
}

/** The user's entities named `key` (normalized) exactly, or containing it; best first. */
async function findEntities(
  db: Queryable,
  userId: string,
  key: string,
  options: { exact: boolean; kind?: EntityKind | undefined },
): Promise<Entity[]> {
  const params: unknown[] = [userId, key];
  const where = [
    'e.user_id = $1',
    options.exact ? 'e.normalized_name = $2' : 'strpos(e.normalized_name, $2) > 0',
  ];
  if (options.kind) where.push(`e.kind = $${params.push(options.kind)}`);
  const rows = await db.query<{ id: string; name: string; kind: string }>(
    `SELECT e.id, e.name, e.kind FROM entities e
     WHERE ${where.join(' AND ')}
     ORDER BY e.normalized_name = $2 DESC,
       (SELECT count(*) FROM entity_mentions em WHERE em.entity_id = e.id) DESC,
       e.created_at, e.id
     LIMIT 10`,
    params,
  );
  return rows.map((row) => ({ id: row.id, name: row.name, kind: toKind(row.kind) }));
}

/** Inserts the entity unless the user has it (same normalized name and kind); returns it. */
async function upsertEntity(
  tx: Queryable,
  userId: string,
  name: string,
  kind: EntityKind,
  now: Date,
  nextId: () => string,
): Promise<Entity | null> {
  const display = name.normalize('NFKC').replace(/\s+/g, ' ').trim();
  const key = normalizeEntityName(display);
  if (!key) return null;
  for (let attempt = 0; attempt < 8; attempt++) {
    // No conflict target: an id collision is skipped too, and the select below tells which.
    await tx.query(
      `INSERT INTO entities (id, user_id, name, kind, normalized_name, created_at)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
      [nextId(), userId, display, kind, key, now],
    );
    const rows = await tx.query<{ id: string; name: string; kind: string }>(
      'SELECT id, name, kind FROM entities WHERE user_id = $1 AND normalized_name = $2 AND kind = $3',
      [userId, key, kind],
    );
    const row = rows[0];
    if (row) return { id: row.id, name: row.name, kind: toKind(row.kind) };
  }
  throw new StewardError('entity_id_exhausted', 'Could not draw an unused entity id.');
}

/** Words an extraction model uses for a kind, besides the kinds' own names. */
const KIND_ALIASES: Readonly<Record<string, EntityKind>> = {
  company: 'organization',
  org: 'organization',
  organisation: 'organization',
  team: 'organization',
  location: 'place',
  city: 'place',
  country: 'place',
  subject: 'topic',
};

function toKind(kind: string | undefined): EntityKind {
  const clean = kind?.trim().toLowerCase() ?? '';
  if ((ENTITY_KINDS as readonly string[]).includes(clean)) return clean as EntityKind;
  return KIND_ALIASES[clean] ?? 'other';
}
