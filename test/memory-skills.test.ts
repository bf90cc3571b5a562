import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { silentLogger } from '../src/logging/logger.ts';
import { embedPendingMemories, llmEmbedder, recordEntities } from '../src/memory/index.ts';
import { builtinHandlers } from '../src/skills/handlers/index.ts';
import {
  memoryHandlers,
  relatedMemoriesHandler,
  saveMemoryHandler,
  searchMemoriesHandler,
} from '../src/skills/handlers/memory/index.ts';
import { loadSkillRoots } from '../src/skills/registry/index.ts';
import type { SkillContext, SkillHandler, SkillResult } from '../src/skills/types.ts';
import { ensureUser } from '../src/users/index.ts';
import { describeEachBackend } from './support/db.ts';
import { type FakeLlm, fakeLlmClient, startFakeLlm } from './support/fake-llm.ts';
import { runHandler } from './support/handlers.ts';

const NOW = new Date('2026-03-10T10:00:00Z');

/** Runs a handler as the executor does and expects it to succeed. */
async function run(
  handler: SkillHandler,
  raw: Record<string, unknown>,
  ctx: SkillContext,
): Promise<SkillResult> {
  const result = await runHandler(handler, raw, ctx);
  expect(result.status, result.content).toBe('ok');
  return result;
}

it('exports one handler per memory skill, registered with the built-ins', () => {
  expect(memoryHandlers.map((handler) => handler.name).sort()).toEqual([
    'memory.related',
    'memory.save',
    'memory.search',
  ]);
  const builtins = builtinHandlers();
  for (const handler of memoryHandlers) expect(builtins.get(handler.name)).toBe(handler);
});

it('marks read-only and mutating skills as documented (flags are checked in skills-docs.test.ts)', () => {
  const skillsDir = fileURLToPath(new URL('../skills', import.meta.url));
  const snapshot = loadSkillRoots([{ dir: skillsDir, source: 'builtin' }]);
  expect(snapshot.skills.get('memory.save')).toMatchObject({ readonly: false, confirm: true });
  expect(snapshot.skills.get('memory.search')).toMatchObject({ readonly: true });
  expect(snapshot.skills.get('memory.related')).toMatchObject({ readonly: true });
});

it('rejects bad flags at the schema, and applies defaults', () => {
  const rejects = (handler: SkillHandler, raw: Record<string, unknown>) =>
    expect(handler.flags.safeParse(raw).success, JSON.stringify(raw)).toBe(false);
  rejects(saveMemoryHandler, {});
  rejects(saveMemoryHandler, { content: '   ' });
  rejects(saveMemoryHandler, { content: 'x'.repeat(2001) });
  rejects(saveMemoryHandler, { content: 'x', category: 'opinion' });
  rejects(saveMemoryHandler, { content: 'x', importance: '1.5' });
  rejects(saveMemoryHandler, { content: 'x', colour: 'red' });
  rejects(searchMemoriesHandler, {});
  rejects(searchMemoriesHandler, { query: 'x', limit: '21' });
  rejects(searchMemoriesHandler, { query: 'x', min_importance: '-0.1' });
  rejects(relatedMemoriesHandler, {});
  rejects(relatedMemoriesHandler, { entity: 'x', kind: 'animal' });
  expect(saveMemoryHandler.flags.parse({ content: ['Likes', 'jazz'], tags: 'music,Evening' })).toEqual({
    content: 'Likes jazz',
    tags: ['music', 'Evening'],
    category: 'fact',
    importance: 0.5,
  });
  expect(searchMemoriesHandler.flags.parse({ query: 'jazz', min_importance: '0.4' })).toMatchObject({
    limit: 10,
    min_importance: 0.4,
  });
});

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake.close();
});

describeEachBackend('memory skills', (getDb, backend) => {
  const context = (userId: string, overrides: Partial<SkillContext> = {}): SkillContext => ({
    user: { id: userId, timezone: 'Europe/Berlin' },
    conversationId: null,
    channel: 'test',
    agentId: null,
    turnId: null,
    executionId: 'exec-test',
    signal: new AbortController().signal,
    services: { database: getDb() },
    logger: silentLogger(),
    now: () => NOW,
    ...overrides,
  });

  it('saves, merges a near-duplicate and says so, and searches with filters', async () => {
    await ensureUser(getDb(), 'ana', { timezone: 'UTC' });
    const ctx = context('ana');
    const saved = await run(
      saveMemoryHandler,
      { content: 'Prefers oat milk in coffee', category: 'preference', tags: 'coffee', importance: '0.7' },
      ctx,
    );
    const id = String(saved.metadata?.id);
    expect(id).toMatch(/^m_[0-9a-z]{8}$/);
    expect(saved.content).toBe(
      `Saved [${id}] Prefers oat milk in coffee · preference · importance 0.70 · #coffee`,
    );
    expect(saved.metadata).toMatchObject({ merged: false });

    const merged = await run(
      saveMemoryHandler,
      { content: 'prefers OAT milk in coffee!', category: 'preference', tags: ['drinks'] },
      ctx,
    );
    expect(merged.content).toMatch(new RegExp(`^Merged with an existing memory ${id}\\b`));
    expect(merged.content).toContain(
      `[${id}] prefers OAT milk in coffee! · preference · importance 0.70 · #coffee #drinks`,
    );
    expect(merged.metadata).toMatchObject({ id, merged: true });

    await run(
      saveMemoryHandler,
      { content: 'Drinks green tea in the afternoon', tags: ['drinks'], importance: '0.3' },
      ctx,
    );
    const found = await run(searchMemoriesHandler, { query: 'coffee tea', tags: 'drinks' }, ctx);
    const lines = found.content.split('\n');
    expect(lines[0]).toMatch(
      /^2 memories, best first, for "coffee tea" · any tag of drinks \((hybrid|full text only)/,
    );
    expect(lines).toContain(
      `[${id}] prefers OAT milk in coffee! · preference · importance 0.70 · #coffee #drinks`,
    );
    expect(found.metadata).toMatchObject({ count: 2 });

    const filtered = await run(
      searchMemoriesHandler,
      { query: 'coffee tea', category: 'fact', min_importance: '0.3', limit: '1' },
      ctx,
    );
    const [teaId] = (filtered.metadata?.ids ?? []) as string[];
    expect(filtered.content.split('\n').slice(1)).toEqual([
      `[${teaId}] Drinks green tea in the afternoon · fact · importance 0.30 · #drinks`,
    ]);
    const none = await run(searchMemoriesHandler, { query: 'violin' }, ctx);
    expect(none.content).toMatch(
      /^No memories or messages match "violin" \(full text only: .+\)\. Try other words, or fewer filters\.$/,
    );
  });

  it('states whether the search used vectors', async () => {
    const db = getDb();
    await ensureUser(db, 'ben', { timezone: 'UTC' });
    const embedder = llmEmbedder(fakeLlmClient(fake));
    const ctx = context('ben', { services: { database: db, embedder } });
    await run(saveMemoryHandler, { content: 'Alex works in IT at Contoso', category: 'relationship' }, ctx);
    await embedPendingMemories(db, fakeLlmClient(fake));
    const found = await run(searchMemoriesHandler, { query: 'Contoso' }, ctx);
    if (backend === 'pglite') {
      expect(found.content.split('\n')[0]).toBe(
        '1 memory, best first, for "Contoso" (hybrid: full text + vectors):',
      );
      expect(found.metadata).toMatchObject({ mode: 'hybrid' });
    } else {
      expect(found.content.split('\n')[0]).toBe(
        '1 memory, best first, for "Contoso" (full text only: the vector extension (pgvector) is not installed in this database):',
      );
      expect(found.metadata).toMatchObject({ mode: 'full_text' });
    }
    const withoutEmbedder = await run(searchMemoriesHandler, { query: 'Contoso' }, context('ben'));
    expect(withoutEmbedder.content.split('\n')[0]).toMatch(/\(full text only: .+\):$/);
  });

  it('shows an entity with its relations and memories, and nothing of other users', async () => {
    const db = getDb();
    await ensureUser(db, 'cai', { timezone: 'UTC' });
    await ensureUser(db, 'dee', { timezone: 'UTC' });
    const ctx = context('cai');
    const saved = await run(
      saveMemoryHandler,
      { content: 'Sarah Chen leads Project Atlas at Contoso', category: 'relationship', importance: '0.8' },
      ctx,
    );
    const id = String(saved.metadata?.id);
    await recordEntities(db, 'cai', {
      memoryId: id,
      entities: [
        { name: 'Sarah Chen', kind: 'person' },
        { name: 'Project Atlas', kind: 'project' },
        { name: 'Contoso', kind: 'organization' },
      ],
      relations: [
        { source: 'Sarah Chen', target: 'Project Atlas', relation: 'leads' },
        { source: 'Project Atlas', target: 'Contoso', relation: 'belongs to' },
      ],
    });
    const related = await run(relatedMemoriesHandler, { entity: 'project atlas' }, ctx);
    expect(related.content.split('\n')).toEqual([
      'Project Atlas (project)',
      'Relations (2):',
      '- Sarah Chen (person) leads Project Atlas',
      '- Project Atlas belongs to Contoso (organization)',
      'Memories mentioning Project Atlas (1):',
      `[${id}] Sarah Chen leads Project Atlas at Contoso · relationship · importance 0.80`,
    ]);
    expect(related.metadata).toMatchObject({ found: true, ids: [id] });

    const unknown = await run(relatedMemoriesHandler, { entity: 'Atlantis' }, ctx);
    expect(unknown.content).toBe(
      'No entity named "Atlantis" is known. Entities are recorded from saved memories; try memory.search --query "Atlantis".',
    );

    // Another user sees none of it.
    const other = context('dee');
    expect((await run(relatedMemoriesHandler, { entity: 'Project Atlas' }, other)).metadata).toMatchObject({
      found: false,
    });
    expect((await run(searchMemoriesHandler, { query: 'Sarah Chen Atlas' }, other)).metadata).toMatchObject({
      count: 0,
    });
    const theirs = await run(
      saveMemoryHandler,
      { content: 'Sarah Chen leads Project Atlas at Contoso', category: 'relationship' },
      other,
    );
    expect(theirs.metadata).toMatchObject({ merged: false });
    expect(theirs.metadata?.id).not.toBe(id);
  });
});
