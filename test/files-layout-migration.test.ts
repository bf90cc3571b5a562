import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import type { Database } from '../src/db/index.ts';
import { FilesService, prepareVaults, sha256 } from '../src/files/index.ts';
import { ensureUser } from '../src/users/index.ts';
import { value } from './support/contracts/file-store-contract.ts';
import { describeEachBackend } from './support/db.ts';

const USERS = ['local', 'nest', 'nest/child', 'googlechat:users', 'googlechat:users/777', 'Alice'];

/**
 * A data dir as the previous layout left it: vaults at `files/<user id>/` (so `nest/child`
 * inside `nest`), archives at `.archive/<path>/vN`, and the operation the archive collision
 * left pending (the second write of `col/v1` after `col` was archived as `.archive/col/v1`).
 */
function previousLayout(filesDir: string): string {
  const put = (file: string, content: string) => {
    mkdirSync(path.dirname(path.join(filesDir, file)), { recursive: true });
    writeFileSync(path.join(filesDir, file), content);
  };
  put('local/notes/plan.md', 'second');
  put('local/.archive/notes/plan.md/v1.md', 'first');
  put('local/col/v1', 'two');
  put('local/.archive/col/v1', 'one');
  put('local/.staging/op-collision', 'two again');
  put('nest/own.md', 'ledger');
  put('nest/.archive/own.md/v1.md', 'old ledger');
  put('nest/child/diary.md', 'kelp');
  put('nest/child/.archive/diary.md/v1.md', 'old kelp');
  put('googlechat:users/777/chat/notes.md', 'harbour');
  put('Alice/a.md', 'capital');
  return filesDir;
}

/** Everything each user can reach through their vault: current files and every version of some paths. */
async function whatUsersSee(files: FilesService) {
  const seen: Record<string, Record<string, string[]>> = {};
  for (const userId of USERS) {
    const vault = files.vault(userId);
    const view: Record<string, string[]> = {};
    const paths = new Set((await vault.fs.filesBelow('')).files.map((file) => file.path));
    for (const deleted of ['col']) paths.add(deleted);
    for (const userPath of [...paths].sort()) {
      const versions = await vault.versions(userPath);
      if (!versions.ok) continue;
      view[userPath] = [];
      for (const version of versions.value)
        view[userPath].push(value(await vault.readVersion(userPath, version.version)).toString());
    }
    seen[userId] = view;
  }
  return seen;
}

describeEachBackend('vault layout migration', (db) => {
  const fresh = async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'steward-layout-'));
    const filesDir = previousLayout(path.join(dataDir, 'files'));
    const database: Database = db();
    for (const userId of USERS) await ensureUser(database, userId);
    await database.query('DELETE FROM file_operations');
    await database.query(
      `INSERT INTO file_operations (id, user_id, store, operation, path, archive_name, content_hash)
       VALUES ('op-collision', 'local', 'local', 'write', 'col/v1', 'v1', $1)`,
      [sha256('two again')],
    );
    return { filesDir, files: new FilesService({ database, dataDir, jobs: null, settings: () => settings }) };
  };
  const settings = { maxReadBytes: 1000, maxIndexBytes: 1000 };

  it('gives every user their own folder and moves archives to the layout that cannot collide', async () => {
    const { filesDir, files } = await fresh();
    const prepared = await files.prepare();
    expect(prepared.problems).toEqual([]);
    expect(prepared.movedUsers.map((moved) => moved.userId).sort()).toEqual([
      'Alice',
      'googlechat:users/777',
      'nest/child',
    ]);
    expect(readdirSync(filesDir).sort()).toEqual(
      ['.layout', '^Alice', 'googlechat:users%2F777', 'local', 'nest', 'nest%2Fchild'].sort(),
    );
    const recovered = await files.recoverAll();
    expect(recovered).toEqual({ completed: 1, rolledBack: 0, quarantined: 0 });

    const seen = await whatUsersSee(files);
    expect(seen.local).toEqual({
      col: ['one'],
      'col/v1': ['two', 'two again'],
      'notes/plan.md': ['first', 'second'],
    });
    expect(seen.nest).toEqual({ 'own.md': ['old ledger', 'ledger'] });
    expect(seen['nest/child']).toEqual({ 'diary.md': ['old kelp', 'kelp'] });
    expect(seen['googlechat:users/777']).toEqual({ 'chat/notes.md': ['harbour'] });
    expect(seen['googlechat:users']).toEqual({});
    expect(seen.Alice).toEqual({ 'a.md': ['capital'] });

    // Idempotent: a second start finds nothing to do and changes nothing.
    const again = await files.prepare();
    expect(again).toEqual({ movedUsers: [], migratedVersions: 0, problems: [] });
    expect(await whatUsersSee(files)).toEqual(seen);
  });

  it('reports a vault it cannot move, leaves it as it is, and migrates the others', async () => {
    const { filesDir, files } = await fresh();
    mkdirSync(path.join(filesDir, 'nest%2Fchild'));
    writeFileSync(path.join(filesDir, 'nest%2Fchild', 'other.md'), 'made elsewhere');
    const prepared = await files.prepare();
    expect(prepared.problems).toEqual([
      'the files of user nest/child are in both nest/child and nest%2Fchild: nothing was moved; merge them by hand',
    ]);
    expect(prepared.movedUsers.map((moved) => moved.userId).sort()).toEqual([
      'Alice',
      'googlechat:users/777',
    ]);
    expect(readFileSync(path.join(filesDir, 'nest', 'child', 'diary.md'), 'utf8')).toBe('kelp');
    const seen = await whatUsersSee(files);
    expect(seen['nest/child']).toEqual({ 'other.md': ['made elsewhere'] });
    expect(seen['googlechat:users/777']).toEqual({ 'chat/notes.md': ['harbour'] });
  });

  it('loses nothing when it crashes at any step, and finishes on the next start', async () => {
    const clean = await fresh();
    const steps: string[] = [];
    await prepareVaults({
      database: db(),
      filesDir: clean.filesDir,
      onStep: (step) => void steps.push(step),
    });
    await clean.files.recoverAll();
    const expected = await whatUsersSee(clean.files);
    expect(steps.length).toBeGreaterThan(10);

    for (let crashAt = 0; crashAt < steps.length; crashAt++) {
      const label = `crash before step ${crashAt} (${steps[crashAt]})`;
      const run = await fresh();
      let seen = 0;
      await expect(
        prepareVaults({
          database: db(),
          filesDir: run.filesDir,
          onStep: () => {
            if (seen++ === crashAt) throw new Error('simulated crash');
          },
        }),
        label,
      ).rejects.toThrow('simulated crash');
      const prepared = await run.files.prepare();
      expect(prepared.problems, label).toEqual([]);
      await run.files.recoverAll();
      expect(await whatUsersSee(run.files), label).toEqual(expected);
    }
  }, 240_000);
});
