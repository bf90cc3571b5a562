import { expect, it } from 'vitest';
import type { Database } from '../src/db/index.ts';
import {
  buildVectorIndexes,
  decayAndArchive,
  nearestMemoryIds,
  type QueryEmbedder,
  saveMemory,
  searchMemories,
  vectorIndexName,
} from '../src/memory/index.ts';
import { ensureUser } from '../src/users/index.ts';
import { describeEachBackend } from './support/db.ts';

const T0 = new Date('2026-03-10T10:00:00Z');

/** Term statistics as stored, and as recomputed from the memories themselves. */
async function statsOf(db: Database, userId: string) {
  const stored = await db.query<{ term: string; doc_count: number }>(
    'SELECT term, doc_count FROM memory_term_stats WHERE user_id = $1 AND doc_count <> 0 ORDER BY term',
    [userId],
  );
  const expected = await db.query<{ term: string; doc_count: number }>(
    `SELECT t.lexeme AS term, count(*)::int AS doc_count
     FROM memory_entries m, unnest(m.search_vector) t
     WHERE m.user_id = $1 AND m.archived_at IS NULL
     GROUP BY t.lexeme ORDER BY t.lexeme`,
    [userId],
  );
  const storedUser = await db.query<{ doc_count: number; total_length: number }>(
    'SELECT doc_count, total_length::int AS total_length FROM memory_user_stats WHERE user_id = $1',
    [userId],
  );
  const expectedUser = await db.query<{ doc_count: number; total_length: number }>(
    `SELECT count(*)::int AS doc_count, COALESCE(sum(length(m.search_vector)), 0)::int AS total_length
     FROM memory_entries m WHERE m.user_id = $1 AND m.archived_at IS NULL`,
    [userId],
  );
  const terms = (rows: Array<{ term: string; doc_count: number }>) =>
    Object.fromEntries(rows.map((row) => [row.term, Number(row.doc_count)]));
  return {
    stored: { terms: terms(stored), ...(storedUser[0] ?? { doc_count: 0, total_length: 0 }) },
    expected: { terms: terms(expected), ...expectedUser[0]! },
  };
}

describeEachBackend('memory ranking', (getDb) => {
  let userCount = 0;
  const newUser = async () => {
    const id = `rank_user_${++userCount}`;
    await ensureUser(getDb(), id, { timezone: 'UTC' });
    return id;
  };
  /** Bulk insert, bypassing de-duplication, like an import: the triggers must keep up. */
  const insert = async (userId: string, contents: string[], prefix = userId) => {
    await getDb().query(
      `INSERT INTO memory_entries (id, user_id, content, category, content_hash)
       SELECT $1 || '_' || t.n, $2, t.content, 'context', md5(t.content || t.n)
       FROM unnest($3::text[]) WITH ORDINALITY AS t(content, n)`,
      [prefix, userId, contents],
    );
  };
  const search = async (userId: string, query: string, limit = 10) =>
    (await searchMemories(getDb(), userId, { query, limit }, { touch: false })).results.map(
      (hit) => hit.memory.content,
    );

  it('ranks a memory with the rare query word above memories with only the common ones', async () => {
    const user = await newUser();
    const chatter = Array.from(
      { length: 60 },
      (_, index) =>
        `[${1 + (index % 28)} May 2023] Caroline: that was such a fun day, thanks for asking #${index}`,
    );
    await insert(user, [
      ...chatter,
      '[8 June 2023] Caroline: I researched adoption agencies all weekend.',
      // Holds two of the three common words and none of the rare one.
      '[8 May 2023] Caroline: May was busy.',
    ]);
    const results = await search(user, 'What did Caroline research about adoption in May?');
    expect(results[0]).toBe('[8 June 2023] Caroline: I researched adoption agencies all weekend.');
    // Full text alone still returns the common-word matches after it.
    expect(results).toHaveLength(10);
  });

  it('scores partial matches by weighted coverage: two rare words beat one, one beats many common ones', async () => {
    const user = await newUser();
    const filler = Array.from(
      { length: 40 },
      (_, index) => `Jon said hello on Monday morning again (${index})`,
    );
    await insert(user, [...filler, 'Jon booked a cello lesson', 'Jon found a cello teacher in Lisbon']);
    const results = await search(user, 'Jon cello teacher Lisbon Monday morning hello', 3);
    expect(results.slice(0, 2)).toEqual(['Jon found a cello teacher in Lisbon', 'Jon booked a cello lesson']);
    // Four common words (jon, hello, monday, morning) rank below one rare one.
    expect(results[2]).toMatch(/^Jon said hello on Monday morning again/);
  });

  it('keeps term statistics per user: idf and ranking of one user never depend on another', async () => {
    const a = await newUser();
    const b = await newUser();
    // For a, "zebra" is everywhere and "quokka" rare; for b the other way round.
    await insert(a, [
      ...Array.from({ length: 30 }, (_, index) => `zebra sighting number ${index}`),
      'a quokka sighting',
      'zebra and quokka',
    ]);
    await insert(b, [
      ...Array.from({ length: 30 }, (_, index) => `quokka sighting number ${index}`),
      'a zebra sighting',
    ]);
    expect((await search(a, 'quokka zebra', 2)).sort()).toEqual(['a quokka sighting', 'zebra and quokka']);
    expect((await search(b, 'quokka zebra', 1))[0]).toBe('a zebra sighting');
    expect((await search(b, 'and quokka zebra')).some((content) => content === 'zebra and quokka')).toBe(
      false,
    );

    const statsA = await statsOf(getDb(), a);
    const statsB = await statsOf(getDb(), b);
    expect(statsA.stored).toEqual(statsA.expected);
    expect(statsB.stored).toEqual(statsB.expected);
    expect(statsA.stored.terms.zebra).toBe(31);
    expect(statsB.stored.terms.zebra).toBe(1);
  });

  it('keeps the statistics exact through saves, merges, archiving, restoring and deletes', async () => {
    const db = getDb();
    const user = await newUser();
    const other = await newUser();
    await insert(other, ['the other user also likes falafel']);
    const otherBefore = await statsOf(db, other);

    const saved = await saveMemory(
      db,
      user,
      { content: 'Prefers falafel wraps for lunch', category: 'preference' },
      { now: T0 },
    );
    await saveMemory(
      db,
      user,
      { content: 'Plays badminton on Thursdays', category: 'fact', tags: ['sport'] },
      { now: T0 },
    );
    // A near-duplicate merges: the content changes, the count does not.
    const merged = await saveMemory(
      db,
      user,
      { content: 'Prefers falafel wraps for lunch on weekdays', category: 'preference', tags: ['food'] },
      { now: T0 },
    );
    expect(merged.merged).toBe(true);
    let stats = await statsOf(db, user);
    expect(stats.stored).toEqual(stats.expected);
    expect(stats.stored.doc_count).toBe(2);
    expect(stats.stored.terms.weekday).toBe(1);
    expect(stats.stored.terms.food).toBe(1);

    // Touching (what every search does) and decaying change nothing.
    await searchMemories(db, user, { query: 'falafel' }, { now: T0 });
    await decayAndArchive(db, { now: new Date(T0.getTime() + 86_400_000), userId: user });
    expect((await statsOf(db, user)).stored).toEqual(stats.stored);

    // Archiving removes a memory from the statistics; restoring brings it back.
    await db.query('UPDATE memory_entries SET archived_at = now() WHERE id = $1', [saved.memory.id]);
    stats = await statsOf(db, user);
    expect(stats.stored).toEqual(stats.expected);
    expect(stats.stored.terms.falafel).toBeUndefined();
    expect(await search(user, 'falafel')).toEqual([]);
    await db.query('UPDATE memory_entries SET archived_at = NULL WHERE id = $1', [saved.memory.id]);
    stats = await statsOf(db, user);
    expect(stats.stored).toEqual(stats.expected);
    expect(stats.stored.terms.falafel).toBe(1);

    // A direct content update and a delete.
    await db.query(
      `UPDATE memory_entries SET content = 'Plays squash on Fridays' WHERE user_id = $1 AND content LIKE 'Plays%'`,
      [user],
    );
    stats = await statsOf(db, user);
    expect(stats.stored).toEqual(stats.expected);
    expect(stats.stored.terms.badminton).toBeUndefined();
    expect(stats.stored.terms.squash).toBe(1);
    await db.query('DELETE FROM memory_entries WHERE id = $1', [saved.memory.id]);
    stats = await statsOf(db, user);
    expect(stats.stored).toEqual(stats.expected);
    expect(stats.stored.doc_count).toBe(1);

    // And the other user's statistics never moved.
    expect((await statsOf(db, other)).stored).toEqual(otherBefore.stored);
  });

  it('honours web-search syntax: exact phrases first, -word excludes', async () => {
    const user = await newUser();
    await insert(user, [
      'oat milk in coffee',
      'milk then oat biscuits',
      'oat flakes with soy milk and decaf',
    ]);
    expect((await search(user, '"oat milk"'))[0]).toBe('oat milk in coffee');
    expect(await search(user, 'oat milk -decaf')).not.toContain('oat flakes with soy milk and decaf');
    expect(await search(user, 'the of and')).toEqual([]);
  });

  it('finds the best memories among thousands whether the query words are rare or common', async () => {
    const user = await newUser();
    // 3,000 memories: "alpha" in every other one, "beta" in every third, "gamma" in every fifth,
    // each memory also holding a unique word; the exact ranking is checked against a full scan.
    const contents = Array.from({ length: 3_000 }, (_, index) =>
      [
        index % 2 === 0 ? 'alpha' : '',
        index % 3 === 0 ? 'beta' : '',
        index % 5 === 0 ? 'gamma' : '',
        `uniq${index.toString(36)}x`,
        index % 7 === 0 ? 'padding words here' : '',
      ]
        .filter(Boolean)
        .join(' '),
    );
    await insert(user, contents);
    for (const query of ['alpha beta gamma', 'alpha beta', 'alpha uniq3x', 'gamma uniqax uniqbx']) {
      const results = await search(user, query, 5);
      // Every result holds the most weight possible: the best memories contain all query words
      // present in them, so the top one must contain every query word some memory holds together.
      const words = query.split(' ');
      const best = contents
        .map((content) => ({
          content,
          held: words.filter((word) => content.split(' ').includes(word)).length,
        }))
        .sort((x, y) => y.held - x.held)[0]!;
      const topHeld = words.filter((word) => results[0]!.split(' ').includes(word)).length;
      expect(topHeld, query).toBe(best.held);
      expect(results, query).toHaveLength(5);
    }
  });

  it('says no embedding model is configured when that is why vectors were not used', async () => {
    const db = getDb();
    const user = await newUser();
    await insert(user, ['a memory about tea']);
    const unconfigured: QueryEmbedder = Object.assign(async () => null, { configured: () => false });
    const found = await searchMemories(db, user, { query: 'tea' }, { embedder: unconfigured });
    expect(found.mode).toBe('full_text');
    expect(found.fullTextReason).toBe(
      db.hasVector
        ? 'no embedding model is configured'
        : 'the vector extension (pgvector) is not installed in this database',
    );
    if (db.hasVector) {
      // Configured, but nothing embedded yet: that is what it says then.
      const configured: QueryEmbedder = Object.assign(async () => ({ vector: [1, 0], model: 'm' }), {
        configured: () => true,
      });
      const waiting = await searchMemories(db, user, { query: 'tea' }, { embedder: configured });
      expect(waiting.fullTextReason).toBe('no memories are embedded yet');
    }
  });

  it('builds an HNSW index per dimension count in the background job and searches through it, per user', async (context) => {
    const db = getDb();
    if (!db.hasVector) context.skip();
    const big = await newUser();
    const small = await newUser();
    const dims = 8;
    // Deterministic vectors: memory i points at angle i around two planes.
    const vectorOf = (i: number) =>
      Array.from({ length: dims }, (_, d) => Math.cos(i * 0.37 * (d + 1)) + (d === i % dims ? 1 : 0));
    const load = async (userId: string, count: number) => {
      await insert(
        userId,
        Array.from({ length: count }, (_, i) => `vector memory ${i}`),
      );
      await db.query(
        `UPDATE memory_entries SET embedding_model = 'test/embed', embedded_at = now() WHERE user_id = $1`,
        [userId],
      );
      await db.query(
        `INSERT INTO memory_embeddings (memory_id, embedding)
         SELECT $1 || '_' || t.n, t.v::vector FROM unnest($2::text[]) WITH ORDINALITY AS t(v, n)`,
        [userId, Array.from({ length: count }, (_, i) => `[${vectorOf(i).join(',')}]`)],
      );
    };
    // Enough of the index is the big user's for search to read it (useVectorIndex).
    await load(big, 500);
    await load(small, 12);
    const exactBefore = await nearestMemoryIds(db, big, vectorOf(7), 'test/embed');

    expect(await buildVectorIndexes(db, { minRows: 1_000 })).toEqual([]);
    const built = await buildVectorIndexes(db, { minRows: 100 });
    expect(built).toEqual([{ dimensions: dims, rows: 512, name: vectorIndexName(dims) }]);
    // Idempotent: a second run builds nothing.
    expect(await buildVectorIndexes(db, { minRows: 100 })).toEqual([]);
    // 512 rows: the planner would rather scan; with scans priced out it must find the index usable.
    const plan = await db.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      return tx.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT memory_id FROM memory_embeddings e WHERE vector_dims(e.embedding) = ${dims}
         ORDER BY e.embedding::vector(${dims}) <=> '[${vectorOf(7).join(',')}]'::vector(${dims}) LIMIT 5`,
      );
    });
    expect(plan.map((row) => row['QUERY PLAN']).join('\n')).toContain(vectorIndexName(dims));

    for (const i of [7, 42, 150]) {
      const exact = await nearestMemoryIds(db, big, vectorOf(i), 'test/embed', { approximate: false });
      const approximate = await nearestMemoryIds(db, big, vectorOf(i), 'test/embed');
      expect(approximate.slice(0, 10)).toEqual(exact.slice(0, 10));
      expect(exact[0]).toBe(`${big}_${i + 1}`);
    }
    expect((await nearestMemoryIds(db, big, vectorOf(7), 'test/embed')).slice(0, 10)).toEqual(
      exactBefore.slice(0, 10),
    );
    // The small user's 12 memories, a sliver of the index: the exact scan answers, and nothing
    // of the other user comes back.
    const mine = await nearestMemoryIds(db, small, vectorOf(3), 'test/embed');
    expect(mine).toHaveLength(12);
    expect(mine.every((id) => id.startsWith(`${small}_`))).toBe(true);

    const embedder: QueryEmbedder = async () => ({ vector: vectorOf(42), model: 'test/embed' });
    const found = await searchMemories(
      db,
      big,
      { query: 'nothing matches this', limit: 3 },
      { embedder, touch: false },
    );
    expect(found.mode).toBe('hybrid');
    expect(found.results[0]?.memory.id).toBe(`${big}_43`);
  });
});
