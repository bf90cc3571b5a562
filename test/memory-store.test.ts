import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../src/db/index.ts';
import { countTokens } from '../src/llm/index.ts';
import {
  decayAndArchive,
  embedPendingMemories,
  llmEmbedder,
  type MemoryCategory,
  memoriesForContext,
  pendingEmbeddings,
  type QueryEmbedder,
  recordEntities,
  relatedToEntity,
  saveMemory,
  searchMemories,
  storeEmbedding,
} from '../src/memory/index.ts';
import { ensureUser } from '../src/users/index.ts';
import { describeEachBackend } from './support/db.ts';
import { type FakeLlm, fakeLlmClient, startFakeLlm } from './support/fake-llm.ts';

const DAY = 86_400_000;
const T0 = new Date('2026-03-10T10:00:00Z');
const daysAfter = (days: number) => new Date(T0.getTime() + days * DAY);

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake.close();
});

describeEachBackend('memory store', (getDb, backend) => {
  let userCount = 0;
  /** A fresh user per test, so tests never see each other's memories. */
  const newUser = async () => {
    const id = `user_${++userCount}`;
    await ensureUser(getDb(), id, { timezone: 'UTC' });
    return id;
  };
  const save = (
    userId: string,
    content: string,
    extra: { category?: MemoryCategory; tags?: string[]; importance?: number; now?: Date } = {},
  ) =>
    saveMemory(
      getDb(),
      userId,
      {
        content,
        category: extra.category ?? 'fact',
        tags: extra.tags ?? [],
        importance: extra.importance ?? 0.5,
      },
      { now: extra.now ?? T0 },
    );
  const rowCount = async (db: Database) =>
    Number((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM memory_entries'))[0]?.n);
  const contents = (result: { results: Array<{ memory: { content: string } }> }) =>
    result.results.map((hit) => hit.memory.content);

  it('merges a near-duplicate of the same category instead of adding it, and says so', async () => {
    const user = await newUser();
    const first = await save(user, 'User prefers oat milk in their coffee', {
      category: 'preference',
      tags: ['coffee'],
      importance: 0.4,
    });
    expect(first.merged).toBe(false);
    expect(first.memory).toMatchObject({
      userId: user,
      category: 'preference',
      tags: ['coffee'],
      importance: 0.4,
    });

    // The same words in another order and case: merged, the longer (existing) text kept.
    const same = await save(user, 'The user prefers OAT MILK in coffee.', {
      category: 'preference',
      tags: ['Drinks', '#coffee'],
      importance: 0.7,
    });
    expect(same.merged).toBe(true);
    expect(same.memory.id).toBe(first.memory.id);
    expect(same.memory).toMatchObject({
      content: 'User prefers oat milk in their coffee',
      tags: ['coffee', 'drinks'],
      importance: 0.7,
    });

    // 5 of 6 words shared (Jaccard 0.83): merged, and the longer new text replaces the old.
    const richer = await save(user, 'User strongly prefers oat milk in their coffee', {
      category: 'preference',
      importance: 0.2,
    });
    expect(richer).toMatchObject({ merged: true, memory: { id: first.memory.id, importance: 0.7 } });
    expect(richer.memory.content).toBe('User strongly prefers oat milk in their coffee');

    // Another category, or too few shared words (3 of 8): separate memories.
    const asFact = await save(user, 'User prefers oat milk in their coffee', { category: 'fact' });
    expect(asFact.merged).toBe(false);
    expect(asFact.memory.id).not.toBe(first.memory.id);
    const tea = await save(user, 'User prefers soy milk in their tea', { category: 'preference' });
    expect(tea.merged).toBe(false);

    const rows = await getDb().query('SELECT id FROM memory_entries WHERE user_id = $1', [user]);
    expect(rows).toHaveLength(3);
  });

  it('filters by any of the tags, category, minimum importance, and caps the limit at 20', async () => {
    const user = await newUser();
    const a = await save(user, 'Quarterly planning happens in Lisbon', {
      tags: ['work', 'travel'],
      importance: 0.7,
    });
    const b = await save(user, 'Planning the summer holiday in Crete', {
      category: 'goal',
      tags: ['travel'],
      importance: 0.3,
    });
    const c = await save(user, 'Planning poker every second Monday', { tags: ['work'], importance: 0.9 });
    await save(user, 'Planning a garden shed', { tags: ['home'], importance: 0.5 });
    const ids = async (search: Parameters<typeof searchMemories>[2]) =>
      (await searchMemories(getDb(), user, search)).results.map((hit) => hit.memory.id).sort();

    expect(await ids({ query: 'planning', tags: ['travel', 'WORK'] })).toEqual(
      [a, b, c].map((s) => s.memory.id).sort(),
    );
    expect(await ids({ query: 'planning', category: 'goal' })).toEqual([b.memory.id]);
    // 0.7 is stored as a `real`: the boundary must still include it.
    expect(await ids({ query: 'planning', minImportance: 0.7 })).toEqual(
      [a, c].map((s) => s.memory.id).sort(),
    );
    expect(await ids({ query: 'planning', tags: ['travel'], minImportance: 0.5, category: 'fact' })).toEqual([
      a.memory.id,
    ]);

    for (let index = 0; index < 22; index++) {
      await save(user, `Budget line ${index} for marketing spend number ${index * 7919}`);
    }
    const many = await searchMemories(getDb(), user, { query: 'marketing budget', limit: 50 });
    expect(many.results).toHaveLength(20);
    expect((await searchMemories(getDb(), user, { query: 'marketing budget' })).results).toHaveLength(10);
  });

  it('ranks full matches above partial ones, keeps one-word overlaps, and weighs importance', async () => {
    const user = await newUser();
    await save(user, 'Buys coffee beans at the Saturday market');
    await save(user, 'Prefers oat milk in coffee');
    await save(user, 'Allergic to peanuts');
    const found = await searchMemories(getDb(), user, { query: 'oat milk coffee' });
    expect(found.mode).toBe('full_text');
    expect(contents(found)).toEqual([
      'Prefers oat milk in coffee',
      'Buys coffee beans at the Saturday market',
    ]);
    expect(found.results.map((hit) => hit.ftsRank)).toEqual([1, 2]);
    expect(found.results[0]!.score).toBeGreaterThan(found.results[1]!.score);

    // Web-search syntax: an excluded word removes what has it.
    expect(contents(await searchMemories(getDb(), user, { query: 'coffee -milk' }))).toEqual([
      'Buys coffee beans at the Saturday market',
    ]);
    // Only stop words, or nothing shared: nothing found (and no error).
    expect((await searchMemories(getDb(), user, { query: 'what is the' })).results).toEqual([]);
    expect((await searchMemories(getDb(), user, { query: 'violin lessons' })).results).toEqual([]);

    // Equally relevant: the more important memory comes first.
    const other = await newUser();
    await save(other, 'Dentist appointment on Monday', { importance: 0.2 });
    await save(other, 'Dentist is Dr. Ruiz on Elm Street', { importance: 0.9 });
    expect(contents(await searchMemories(getDb(), other, { query: 'dentist' }))).toEqual([
      'Dentist is Dr. Ruiz on Elm Street',
      'Dentist appointment on Monday',
    ]);
  });

  it('marks only the memories it returns as accessed', async () => {
    const user = await newUser();
    const hit = await save(user, 'Sister Ana lives in Porto');
    const miss = await save(user, 'Car insurance renews in October');
    const later = daysAfter(5);
    const found = await searchMemories(getDb(), user, { query: 'Ana Porto' }, { now: later });
    expect(found.results[0]?.memory.accessedAt).toBe(later.toISOString());
    const rows = await getDb().query<{ id: string; accessed_at: Date }>(
      'SELECT id, accessed_at FROM memory_entries WHERE user_id = $1',
      [user],
    );
    const accessed = new Map(rows.map((row) => [row.id, new Date(row.accessed_at).toISOString()]));
    expect(accessed.get(hit.memory.id)).toBe(later.toISOString());
    expect(accessed.get(miss.memory.id)).toBe(T0.toISOString());
  });

  it('rewrites accessed_at at most once an hour per memory', async () => {
    const user = await newUser();
    const memory = await save(user, 'Sister Ana lives in Porto');
    const accessedAt = async () => {
      const [row] = await getDb().query<{ accessed_at: Date }>(
        'SELECT accessed_at FROM memory_entries WHERE id = $1',
        [memory.memory.id],
      );
      return new Date(row!.accessed_at).toISOString();
    };
    const soon = new Date(T0.getTime() + 30 * 60_000);
    const found = await searchMemories(getDb(), user, { query: 'Ana Porto' }, { now: soon });
    expect(found.results[0]?.memory.accessedAt).toBe(T0.toISOString());
    expect(await accessedAt()).toBe(T0.toISOString());
    const later = new Date(T0.getTime() + 61 * 60_000);
    const again = await searchMemories(getDb(), user, { query: 'Ana Porto' }, { now: later });
    expect(again.results[0]?.memory.accessedAt).toBe(later.toISOString());
    expect(await accessedAt()).toBe(later.toISOString());
  });

  if (backend === 'pglite') {
    it('fuses vector similarity in: finds what full text cannot match', async () => {
      const db = getDb();
      const user = await newUser();
      await save(user, 'Alex works in IT at Contoso', { category: 'relationship' });
      await save(user, 'Prefers oat milk in coffee', { category: 'preference' });
      await save(user, 'Wants to run a half marathon this autumn', { category: 'goal' });
      await save(user, 'Daughter Mia plays the violin on Tuesdays', { category: 'relationship' });
      const other = await newUser();
      await save(other, 'Alex works in IT at Contoso', { category: 'relationship' });

      fake.reset();
      expect(await embedPendingMemories(db, fakeLlmClient(fake), { batchSize: 2 })).toBeGreaterThanOrEqual(5);
      expect(await pendingEmbeddings(db, 10)).toEqual([]);
      // Batches of two: every embeddings request carried at most two texts.
      const batches = fake.requests.filter((request) => request.kind === 'embeddings');
      expect(batches.length).toBeGreaterThanOrEqual(3);
      expect(
        batches.every((request) => Array.isArray(request.body.input) && request.body.input.length <= 2),
      ).toBe(true);
      const embedder = llmEmbedder(fakeLlmClient(fake));

      // Every word of "who is in IT" is an English stop word: full text has nothing to match,
      // while the bag-of-words vectors still share "in" and "it" with the Contoso memory.
      const query = 'who is in IT';
      expect((await searchMemories(db, user, { query })).results).toEqual([]);
      const hybrid = await searchMemories(db, user, { query }, { embedder });
      expect(hybrid.mode).toBe('hybrid');
      expect(hybrid.fullTextReason).toBeUndefined();
      expect(hybrid.results[0]?.memory.content).toBe('Alex works in IT at Contoso');
      expect(hybrid.results[0]?.memory.userId).toBe(user);
      expect(hybrid.results[0]).toMatchObject({ vectorRank: 1 });
      expect(hybrid.results[0]?.ftsRank).toBeUndefined();
      // The other user's identical memory is never a candidate.
      expect(hybrid.results.every((result) => result.memory.userId === user)).toBe(true);

      // A memory found by both rankings outscores one found by full text alone.
      const both = await searchMemories(db, user, { query: 'oat milk coffee' }, { embedder });
      expect(both.results[0]).toMatchObject({ ftsRank: 1, vectorRank: 1 });
    });

    it('re-embeds changed memories and searches only embeddings of the query model', async () => {
      const db = getDb();
      const user = await newUser();
      const saved = await save(user, 'Flight to Lisbon departs at nine');
      const pending = (await pendingEmbeddings(db, 1000)).find((row) => row.id === saved.memory.id);
      expect(pending).toBeDefined();
      expect(await storeEmbedding(db, saved.memory.id, [1, 0, 0], 'test/embed', pending)).toBe(true);
      expect((await pendingEmbeddings(db, 1000)).some((row) => row.id === saved.memory.id)).toBe(false);

      // A merge that changes the text clears the embedding; the stale vector is not stored.
      const merged = await save(user, 'Flight to Lisbon departs at nine sharp');
      expect(merged).toMatchObject({ merged: true, memory: { id: saved.memory.id, embeddedAt: null } });
      expect(await storeEmbedding(db, saved.memory.id, [1, 0, 0], 'test/embed', pending)).toBe(false);
      expect((await pendingEmbeddings(db, 1000)).some((row) => row.id === saved.memory.id)).toBe(true);
      const fresh = (await pendingEmbeddings(db, 1000)).find((row) => row.id === saved.memory.id)!;
      expect(await storeEmbedding(db, saved.memory.id, [0, 1, 0], 'test/embed', fresh)).toBe(true);

      const embedderFor =
        (model: string): QueryEmbedder =>
        async () => ({ vector: [0, 1, 0], model });
      const same = await searchMemories(
        db,
        user,
        { query: 'flight' },
        { embedder: embedderFor('test/embed') },
      );
      expect(same.mode).toBe('hybrid');
      expect(same.results[0]).toMatchObject({ ftsRank: 1, vectorRank: 1 });
      const otherModel = await searchMemories(
        db,
        user,
        { query: 'flight' },
        { embedder: embedderFor('other/embed') },
      );
      expect(otherModel).toMatchObject({
        mode: 'full_text',
        fullTextReason: 'no memories are embedded with other/embed yet',
      });
      expect(otherModel.results).toHaveLength(1);
      const failing = await searchMemories(
        db,
        user,
        { query: 'flight' },
        {
          embedder: async () => {
            throw new Error('embeddings provider is down');
          },
        },
      );
      expect(failing.mode).toBe('full_text');
      expect(failing.fullTextReason).toContain('embeddings provider is down');
      expect(failing.results).toHaveLength(1);
      const none = await searchMemories(db, user, { query: 'flight' }, { embedder: async () => null });
      expect(none.fullTextReason).toBe('no embedding model is configured');
    });
  } else {
    it('says it searched full text only where pgvector is missing, without embedding the query', async () => {
      const db = getDb();
      const user = await newUser();
      await save(user, 'Alex works in IT at Contoso');
      let embedCalls = 0;
      const embedder: QueryEmbedder = async () => {
        embedCalls++;
        return { vector: [1, 0], model: 'test/embed' };
      };
      const found = await searchMemories(db, user, { query: 'Contoso' }, { embedder });
      expect(found).toMatchObject({
        mode: 'full_text',
        fullTextReason: 'the vector extension (pgvector) is not installed in this database',
      });
      expect(contents(found)).toEqual(['Alex works in IT at Contoso']);
      expect(embedCalls).toBe(0);
      fake.reset();
      expect(await pendingEmbeddings(db, 10)).toEqual([]);
      expect(await embedPendingMemories(db, fakeLlmClient(fake))).toBe(0);
      expect(fake.requests).toEqual([]);
    });
  }

  it('records entities, relations and mentions once, and answers what relates to a name', async () => {
    const user = await newUser();
    const job = await save(user, 'Sarah Chen works at Contoso on Project Atlas', {
      category: 'relationship',
    });
    const boss = await save(user, 'Marco manages Sarah Chen', { category: 'relationship' });
    const first = await recordEntities(getDb(), user, {
      memoryId: job.memory.id,
      entities: [
        { name: 'Sarah Chen', kind: 'person' },
        { name: 'Contoso', kind: 'company' },
        { name: 'Project Atlas', kind: 'project' },
      ],
      relations: [
        { source: 'Sarah Chen', target: 'contoso', relation: 'Works at' },
        { source: 'Sarah Chen', target: 'Project Atlas', relation: 'works on' },
      ],
    });
    expect(first).toMatchObject({ relationsAdded: 2, mentionsAdded: 3 });
    expect(first.entities.find((entity) => entity.name === 'Contoso')?.kind).toBe('organization');
    const again = await recordEntities(getDb(), user, {
      memoryId: job.memory.id,
      entities: [{ name: 'sarah chen', kind: 'person' }],
      relations: [{ source: 'Sarah Chen', target: 'Contoso', relation: 'works at' }],
    });
    expect(again).toMatchObject({ relationsAdded: 0, mentionsAdded: 0 });
    // A relation to a name not listed reuses the known entity (Sarah) or adds one (Marco, other).
    await recordEntities(getDb(), user, {
      memoryId: boss.memory.id,
      entities: [],
      relations: [{ source: 'Marco', target: 'Sarah  Chen', relation: 'manages' }],
    });

    const related = await relatedToEntity(getDb(), user, '  SARAH chen ');
    expect(related?.entity).toMatchObject({ name: 'Sarah Chen', kind: 'person' });
    expect(
      related?.relations
        .map((relation) => [relation.direction, relation.relation, relation.other.name])
        .sort(),
    ).toEqual([
      ['incoming', 'manages', 'Marco'],
      ['outgoing', 'works at', 'Contoso'],
      ['outgoing', 'works on', 'Project Atlas'],
    ]);
    expect(related?.relations.find((relation) => relation.other.name === 'Marco')?.other.kind).toBe('other');
    expect(related?.memories.map((memory) => memory.id).sort()).toEqual(
      [job.memory.id, boss.memory.id].sort(),
    );

    const contoso = await relatedToEntity(getDb(), user, 'contoso');
    expect(contoso?.relations).toEqual([
      expect.objectContaining({
        direction: 'incoming',
        relation: 'works at',
        other: expect.objectContaining({ name: 'Sarah Chen' }),
      }),
    ]);
    // No equal name: the entity whose name contains it.
    expect((await relatedToEntity(getDb(), user, 'atlas'))?.entity.name).toBe('Project Atlas');
    expect(await relatedToEntity(getDb(), user, 'Nobody Known')).toBeNull();
  });

  it('decays importance exactly however often it runs, and archives old faded memories without deleting', async () => {
    const db = getDb();
    const user = await newUser();
    const onceUser = await newUser();
    const daily = await save(user, 'Daily decayed memory about kites', { importance: 0.8 });
    const once = await save(onceUser, 'Once decayed memory about boats', { importance: 0.8 });
    const importanceOf = async (id: string) =>
      Number(
        (
          await db.query<{ importance: number }>('SELECT importance FROM memory_entries WHERE id = $1', [id])
        )[0]?.importance,
      );

    // Thirty daily passes, or one pass after thirty days: the same half (half-life 30 days).
    for (let day = 1; day <= 30; day++) await decayAndArchive(db, { now: daysAfter(day), userId: user });
    await decayAndArchive(db, { now: daysAfter(30), userId: onceUser });
    expect(await importanceOf(daily.memory.id)).toBeCloseTo(0.4, 4);
    expect(await importanceOf(once.memory.id)).toBeCloseTo(0.4, 4);

    // A use stops the clock: used at day 45, decayed at day 60 = 15 days, not 30.
    await searchMemories(db, user, { query: 'kites' }, { now: daysAfter(45) });
    await decayAndArchive(db, { now: daysAfter(60), userId: user });
    expect(await importanceOf(daily.memory.id)).toBeCloseTo(0.4 * 0.5 ** 0.5, 4);
    await decayAndArchive(db, { now: daysAfter(60), userId: onceUser });
    expect(await importanceOf(once.memory.id)).toBeCloseTo(0.2, 4);

    // Old and faded: archived. Faded but recent (younger than 90 days): kept.
    const faint = await save(user, 'Faint old memory about stamps', {
      importance: 0.05,
      now: daysAfter(-200),
    });
    await save(user, 'Faint new memory about coins', { importance: 0.05, now: daysAfter(50) });
    const before = await rowCount(db);
    const result = await decayAndArchive(db, { now: daysAfter(61), userId: user });
    expect(result).toEqual({ decayed: 3, archived: 1 });
    expect(await rowCount(db)).toBe(before);
    const archived = await db.query<{ id: string }>(
      'SELECT id FROM memory_entries WHERE user_id = $1 AND archived_at IS NOT NULL',
      [user],
    );
    expect(archived.map((row) => row.id)).toEqual([faint.memory.id]);
    expect((await searchMemories(db, user, { query: 'stamps' })).results).toEqual([]);
    expect(contents(await searchMemories(db, user, { query: 'coins' }))).toEqual([
      'Faint new memory about coins',
    ]);
    // An archived memory is not merged into: saving it again adds a live one.
    const resaved = await save(user, 'Faint old memory about stamps', { now: daysAfter(61) });
    expect(resaved.merged).toBe(false);
    expect(resaved.memory.id).not.toBe(faint.memory.id);
  });

  it('fills the context budget with the most relevant memories and touches only those', async () => {
    const db = getDb();
    const user = await newUser();
    const best = await save(user, 'Prefers window seats on long flights', { importance: 0.9 });
    const long = await save(
      user,
      `Flights: ${'always books through the company travel portal with the corporate card and loyalty number '.repeat(4)}`,
      { importance: 0.5 },
    );
    const small = await save(user, 'Hates early flights', { importance: 0.3 });
    const budget = countTokens(`- ${best.memory.content}\n`) + countTokens(`- ${small.memory.content}\n`) + 2;
    const later = daysAfter(3);
    const chosen = await memoriesForContext(db, user, 'book me flights to Lisbon', budget, { now: later });
    expect(chosen).toEqual([best.memory.content, small.memory.content]);
    const usedTokens = chosen.reduce((sum, content) => sum + countTokens(`- ${content}\n`), 0);
    expect(usedTokens).toBeLessThanOrEqual(budget);
    const touched = await db.query<{ id: string }>(
      'SELECT id FROM memory_entries WHERE user_id = $1 AND accessed_at = $2 ORDER BY id',
      [user, later],
    );
    expect(touched.map((row) => row.id)).toEqual([best.memory.id, small.memory.id].sort());
    expect(touched.map((row) => row.id)).not.toContain(long.memory.id);
    expect(await memoriesForContext(db, user, 'book me flights', 0)).toEqual([]);
  });

  it("never lets one user see, merge into, relate to or archive another user's memories", async () => {
    const db = getDb();
    const alice = await newUser();
    const bob = await newUser();
    const secret = await save(alice, 'Alice keeps the spare key under the blue flowerpot', {
      importance: 0.01,
      now: daysAfter(-400),
    });
    await recordEntities(db, alice, {
      memoryId: secret.memory.id,
      entities: [{ name: 'Blue Flowerpot', kind: 'place' }],
    });

    expect((await searchMemories(db, bob, { query: 'spare key flowerpot' })).results).toEqual([]);
    expect(await memoriesForContext(db, bob, 'where is the spare key', 500)).toEqual([]);
    const bobs = await save(bob, 'Alice keeps the spare key under the blue flowerpot', {
      importance: 0.01,
      now: daysAfter(95),
    });
    expect(bobs.merged).toBe(false);
    expect(bobs.memory.id).not.toBe(secret.memory.id);
    expect(await relatedToEntity(db, bob, 'blue flowerpot')).toBeNull();
    await expect(
      recordEntities(db, bob, { memoryId: secret.memory.id, entities: [{ name: 'Key', kind: 'topic' }] }),
    ).rejects.toThrow(/No memory/);
    expect(
      await db.query(
        'SELECT 1 FROM entities WHERE user_id = $1 UNION ALL SELECT 1 FROM entity_mentions WHERE user_id = $1',
        [bob],
      ),
    ).toEqual([]);
    expect(await decayAndArchive(db, { now: daysAfter(100), userId: bob })).toMatchObject({ archived: 0 });

    const aliceRow = await db.query<{ content: string; archived_at: Date | null }>(
      'SELECT content, archived_at FROM memory_entries WHERE id = $1',
      [secret.memory.id],
    );
    expect(aliceRow).toEqual([
      { content: 'Alice keeps the spare key under the blue flowerpot', archived_at: null },
    ]);
    expect(contents(await searchMemories(db, alice, { query: 'spare key' }))).toEqual([
      secret.memory.content,
    ]);
  });
});
