import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exportUser, forgetUser, readCatalog, userDataPlan } from '../src/backup/index.ts';
import type { Database } from '../src/db/index.ts';
import { createApiToken, linkIdentity } from '../src/users/index.ts';
import { describeEachBackend } from './support/db.ts';
import { type FilesRuntime, startFilesRuntime } from './support/files-runtime.ts';
import { treeSums } from './support/tree-sums.ts';

const ALICE = 'alice-7f3e';
const ALICE_DIGEST = 'workflows.digest_alicefe';
const tmp = (prefix: string) => mkdtempSync(path.join(os.tmpdir(), `steward-${prefix}-`));

/** Per table: rows that mention `text` anywhere, and a digest of all the rows that do not. */
async function mentions(database: Database, text: string) {
  const catalog = await readCatalog(database);
  const result: Record<string, { mentioning: number; others: string }> = {};
  for (const table of catalog.tables) {
    const [row] = await database.query<{ mentioning: number; others: string }>(
      `SELECT count(*) FILTER (WHERE x::text LIKE '%' || $1 || '%')::int AS mentioning,
              md5(coalesce(string_agg(x::text, E'\\n' ORDER BY x::text) FILTER (WHERE x::text NOT LIKE '%' || $1 || '%'), '')) AS others
       FROM "${table.name}" x`,
      [text],
    );
    result[table.name] = row!;
  }
  return result;
}

describeEachBackend('export and delete one user', (get) => {
  let files: FilesRuntime;
  let skillsDir: string;
  beforeAll(async () => {
    files = await startFilesRuntime(get());
    skillsDir = files.runtime.config.get().skillsDir;
    for (const user of ['local', ALICE]) {
      for (const command of [
        `tasks.create --title "Call the plumber for ${user}"`,
        `memory.save --content "${user} likes green tea" --category preference`,
        `files.write --path notes/a.md --content "v1 of ${user}"`,
        `files.write --path notes/a.md --content "v2 of ${user}"`,
        `workflow.build --name digest_${user.replace(/[^a-z]/g, '')} --description "Morning digest of ${user}" --steps "List my tasks with tasks.search" --schedule "0 7 * * *"`,
      ]) {
        const result = await files.run(command, user);
        expect(result.status, `${command}: ${result.content}`).toBe('ok');
      }
      await files.runtime.engine.handle({ userId: user, text: `hello, I am ${user}`, channel: 'cli' });
    }
    await linkIdentity(get(), { channel: 'telegram', externalId: '4242', userId: ALICE });
    await createApiToken(get(), ALICE, 'phone');
  }, 120_000);
  afterAll(async () => {
    await files?.close();
  });

  it('classifies every table: derived as a user’s, or known as shared', async () => {
    const plan = userDataPlan(await readCatalog(get()));
    expect(plan.unclassified).toEqual([]);
    expect(plan.owned.map((entry) => entry.table.name)).toEqual(
      expect.arrayContaining([
        'tasks',
        'task_dependencies',
        'memory_entries',
        'messages',
        'api_tokens',
        'channel_identities',
      ]),
    );
    // Deleted in an order the foreign keys allow: every table before the tables it references.
    const position = new Map(plan.owned.map((entry, index) => [entry.table.name, index]));
    for (const entry of plan.owned)
      for (const key of entry.table.foreignKeys)
        if (key.table !== entry.table.name)
          expect(position.get(key.table)!, `${entry.table.name} → ${key.table}`).toBeGreaterThan(
            position.get(entry.table.name)!,
          );
  });

  it('covers a new table with a user column without a change, and flags one it cannot classify', async () => {
    await get().exec('CREATE TABLE zz_new_feature (id int PRIMARY KEY, user_id text NOT NULL)');
    await get().exec('CREATE TABLE zz_unclear (id int PRIMARY KEY, owner_name text)');
    try {
      const plan = userDataPlan(await readCatalog(get()));
      expect(plan.owned.map((entry) => entry.table.name)).toContain('zz_new_feature');
      expect(plan.unclassified).toEqual(['zz_unclear']);
    } finally {
      await get().exec('DROP TABLE zz_new_feature; DROP TABLE zz_unclear');
    }
  });

  it('exports exactly one user’s data', async () => {
    const dir = path.join(tmp('export'), 'alice');
    const report = await exportUser({ database: get(), dataDir: files.dataDir, skillsDir }, ALICE, dir);
    expect(report.conversations).toBe(1);
    expect(report.skills).toEqual([ALICE_DIGEST]);
    const all = Object.entries(treeSums(dir)).map(
      ([name]) => [name, readFileSync(path.join(dir, name), 'utf8')] as const,
    );
    expect(all.map(([name]) => name)).toEqual(
      expect.arrayContaining([
        'README.md',
        'tasks.md',
        'memories.md',
        path.join('files', 'notes', 'a.md'),
        path.join('files', '.archive', '+notes', '+a.md', 'v1.md'),
        path.join('skills', 'workflows', 'digest_alicefe.md'),
        path.join('data', 'channel_identities.json'),
      ]),
    );
    expect(readFileSync(path.join(dir, 'tasks.md'), 'utf8')).toContain(`Call the plumber for ${ALICE}`);
    expect(readFileSync(path.join(dir, 'files', 'notes', 'a.md'), 'utf8')).toBe(`v2 of ${ALICE}`);
    // Nothing of the owner's anywhere in it, and no token hash.
    for (const [name, text] of all) {
      expect(text, name).not.toMatch(/for local|of local|local likes|I am local|digest_local/);
      expect(text, name).not.toContain('token_hash');
    }
    const conversation = readdirSync(path.join(dir, 'conversations')).find((name) => name.endsWith('.md'))!;
    expect(readFileSync(path.join(dir, 'conversations', conversation), 'utf8')).toContain(
      `hello, I am ${ALICE}`,
    );
  }, 60_000);

  it('deletes every row and file of that user, and nothing of anyone else', async () => {
    const before = await mentions(get(), ALICE);
    const ownerFiles = treeSums(path.join(files.dataDir, 'files', 'local'));
    const ownerSkill = readFileSync(path.join(skillsDir, 'workflows', 'digest_local.md'), 'utf8');
    expect(before.tasks!.mentioning).toBe(1);
    const report = await forgetUser({ database: get(), dataDir: files.dataDir, skillsDir }, ALICE);
    expect(report.rows).toEqual(
      expect.arrayContaining([
        { table: 'users', rows: 1 },
        { table: 'api_tokens', rows: 1 },
      ]),
    );
    expect(report.files).toBe(2);
    expect(report.skills).toEqual([ALICE_DIGEST]);
    const after = await mentions(get(), ALICE);
    for (const [table, counts] of Object.entries(after)) {
      expect(counts.mentioning, `${table} still mentions ${ALICE}`).toBe(0);
      expect(counts.others, `${table}: rows of others changed`).toBe(before[table]!.others);
    }
    expect(existsSync(path.join(files.dataDir, 'files', ALICE))).toBe(false);
    expect(treeSums(path.join(files.dataDir, 'files', 'local'))).toEqual(ownerFiles);
    expect(existsSync(path.join(skillsDir, 'workflows', 'digest_alicefe.md'))).toBe(false);
    expect(readFileSync(path.join(skillsDir, 'workflows', 'SKILL.md'), 'utf8')).not.toContain(
      'digest_alicefe',
    );
    expect(readFileSync(path.join(skillsDir, 'workflows', 'digest_local.md'), 'utf8')).toBe(ownerSkill);
    await expect(
      forgetUser({ database: get(), dataDir: files.dataDir, skillsDir }, 'local'),
    ).rejects.toMatchObject({
      code: 'user_is_owner',
    });
    await expect(
      forgetUser({ database: get(), dataDir: files.dataDir, skillsDir }, ALICE),
    ).rejects.toMatchObject({
      code: 'user_not_found',
    });
  }, 60_000);
});
