import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Hono } from 'hono';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { indexedCount, indexVault, userVaultDir, watchVaults } from '../src/files/index.ts';
import { silentLogger } from '../src/logging/logger.ts';
import { type AuthEnv, createServerApp, runRoutes } from '../src/server/index.ts';
import { createApiToken, ensureUser } from '../src/users/index.ts';
import { describeEachBackend } from './support/db.ts';
import { type FakeWebhook, startFakeWebhook } from './support/fake-webhook.ts';
import { expectingStatus, type FilesRuntime, startFilesRuntime } from './support/files-runtime.ts';

describeEachBackend('files: nothing one user does breaks the vault for others', (db) => {
  let steward: FilesRuntime;
  let webhook: FakeWebhook;
  beforeAll(async () => {
    webhook = await startFakeWebhook();
    steward = await startFilesRuntime(db(), {
      yaml: `alerts: { webhook_url: "${webhook.url}/hook?key=k" }\n`,
    });
  });
  afterAll(async () => {
    await steward.close();
    await webhook.close();
  });

  const { ok, error } = expectingStatus(() => steward);
  const files = () => steward.runtime.services.files!;

  it('keeps the versions of a path apart from the files below a folder of the same name', async () => {
    const user = 'collider';
    await ok('files.write --path col --content one', user);
    await ok('files.delete --path col', user);
    expect(await ok('files.write --path col/v1 --content two', user)).toMatch(/Created col\/v1 \(v1/);
    expect(await ok('files.write --path col/v1 --content two', user)).toMatch(/now v2.*archived as v1/);
    expect(await ok('files.versions --path col/v1', user)).toMatch(/v1 · .*\nv2 · .* · current/);
    expect(await ok('files.versions --path col', user)).toMatch(/It was deleted[\s\S]*v1 ·/);
    expect(await ok('files.read --path col --version 1', user)).toContain('one');
    expect(await ok('files.read --path col/v1 --version 1', user)).toContain('two');
    // Nothing is left pending: every later operation of this user works.
    expect(await ok('files.list', user)).toContain('col/');
    const pending = await db().query(
      `SELECT 1 FROM file_operations WHERE user_id = $1 AND status = 'pending'`,
      [user],
    );
    expect(pending).toHaveLength(0);
    await files().recoverAll();
  });

  it('sets aside a journaled operation that cannot be settled, reports it, and keeps the vault working', async () => {
    const user = 'poisoned';
    await ensureUser(db(), user);
    await ok('files.write --path a.md --content kept', user);
    const vault = files().vault(user);
    // A file where the archive folder of a.md must go: the delete below can neither finish nor be undone.
    const blocker = vault.fs.archiveDir('a.md');
    mkdirSync(path.dirname(blocker), { recursive: true });
    writeFileSync(blocker, 'in the way');
    await db().query(
      `INSERT INTO file_operations (id, user_id, store, operation, path, archive_name) VALUES ('poison-1', $1, 'local', 'delete', 'a.md', 'v1.md')`,
      [user],
    );

    const report = await files().recoverAll();
    expect(report.quarantined).toBe(1);
    const [row] = await db().query<{ status: string; error: string }>(
      `SELECT status, error FROM file_operations WHERE id = 'poison-1'`,
    );
    expect(row?.status).toBe('quarantined');
    expect(row?.error).toMatch(/ENOTDIR|EEXIST|exists|not a directory/);
    const records = readdirSync(path.join(steward.dataDir, 'files', '.quarantine'));
    expect(records).toContain('poison-1.json');
    const record = JSON.parse(
      readFileSync(path.join(steward.dataDir, 'files', '.quarantine', 'poison-1.json'), 'utf8'),
    );
    expect(record).toMatchObject({ id: 'poison-1', userId: user, operation: 'delete', path: 'a.md' });
    await steward.runtime.observability.flush();
    const alerts = webhook.delivered.map((entry) => (entry.body as { text: string }).text);
    expect(alerts.join('\n')).toMatch(/A file operation was set aside[\s\S]*user poisoned: a delete/);

    // The rest of this user's vault keeps working, and so does the file the operation was about.
    expect(await ok('files.read --path a.md', user)).toContain('kept');
    await ok('files.write --path b.md --content fine', user);
    expect(await ok('files.list', user)).toContain('b.md');
  });

  it('never lets a user id that nests inside another reach the other’s files', async () => {
    const root = path.join(steward.dataDir, 'files');
    expect(path.dirname(userVaultDir(root, 'nest/child'))).toBe(root);
    expect(path.relative(userVaultDir(root, 'nest'), userVaultDir(root, 'nest/child'))).toMatch(/^\.\./);
    expect(userVaultDir(root, 'Alice').toLowerCase()).not.toBe(userVaultDir(root, 'alice').toLowerCase());

    await ok('files.write --path diary.md --content "The child hid the kelp key."', 'nest/child');
    await ok('files.write --path own.md --content "The parent keeps a ledger."', 'nest');
    await steward.index();

    expect(await ok('files.list', 'nest')).not.toMatch(/child|diary/);
    expect(await error('files.read --path child/diary.md', 'nest')).toMatch(/no file/);
    expect(await ok('files.search --query kelp', 'nest')).toMatch(/No files match/);
    expect(await ok('files.list', 'nest/child')).not.toMatch(/own\.md/);
    expect(await ok('files.search --query ledger', 'nest/child')).toMatch(/No files match/);

    // A write by the parent to the same-looking path lands in its own vault.
    await ok('files.write --path child/diary.md --content "overwritten?"', 'nest');
    expect(await ok('files.read --path diary.md', 'nest/child')).toContain('kelp key');
    expect(await ok('files.versions --path diary.md', 'nest/child')).toMatch(/^diary\.md has 1 version/);
  });

  it('a token for googlechat:users cannot read googlechat:users/777 over HTTP', async () => {
    await ok('files.write --path chat/notes.md --content "harbour code 4471"', 'googlechat:users/777');
    await steward.index();
    await ensureUser(db(), 'googlechat:users');
    const token = (await createApiToken(db(), 'googlechat:users')).token;
    const api = new Hono<AuthEnv>();
    api.route('/', runRoutes(steward.runtime));
    const app = createServerApp({
      database: db(),
      logger: silentLogger(),
      config: () => steward.runtime.config.get(),
      api,
    });
    const run = async (command: string) => {
      const response = await app.request('http://localhost/api/run', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ command }),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as { status: string; content: string };
    };
    expect((await run('files.list')).content).not.toMatch(/777|chat/);
    expect((await run('files.read --path 777/chat/notes.md')).status).toBe('error');
    expect((await run('files.search --query harbour')).content).toMatch(/No files match/);
  });

  it('refuses file names with control or bidirectional-override characters, saying which', async () => {
    for (const [name, shown] of [
      ['evil\u202Edm.exe', 'U+202E'],
      ['two\nlines.md', 'U+000A'],
      ['tab\there.md', 'U+0009'],
      ['iso\u2066late.md', 'U+2066'],
      ['mark\u200Fx.md', 'U+200F'],
      ['mark\u200Ex.md', 'U+200E'],
    ] as const) {
      const result = await steward.run(`files.write --path ${JSON.stringify(name)} --content x`, 'namer');
      expect(result.status, name).toBe('error');
      expect(result.content).toContain(shown);
      expect(result.content).not.toContain(name);
    }
    await ok('files.write --path a.md --content x', 'namer');
    expect(await error("files.move --path a.md --to 'b\u202E.md'", 'namer')).toContain('U+202E');
    expect(await ok('files.list', 'namer')).toMatch(/^1 in your files:\na\.md ·/);
  });

  it('shows paths relative to the user’s own space, never the server’s', async () => {
    const user = 'leaky';
    await ok('files.write --path a.md --content x', user);
    // Steward's staging folder replaced by a file: the next write fails inside the vault.
    const staging = path.join(files().vault(user).fs.root, '.staging');
    if (existsSync(staging)) {
      const { rmSync } = await import('node:fs');
      rmSync(staging, { recursive: true });
    }
    writeFileSync(staging, 'not a folder');
    const failed = await steward.run('files.write --path b.md --content y', user);
    expect(failed.status).toBe('error');
    expect(failed.content).not.toContain(steward.dataDir);
    expect(failed.content).toMatch(/\.staging/);

    const built = await steward.run(
      'workflow.build --name leak_check --description "Check" --steps "Use tasks.search to list open tasks"',
      user,
    );
    expect(built.status, built.content).toBe('ok');
    expect(JSON.stringify(built)).not.toContain(steward.dataDir);
    expect(built.metadata.path).toBe('workflows/leak_check.md');
  });
});

describeEachBackend('files: the vault scan never follows symbolic links', (db) => {
  let steward: FilesRuntime;
  beforeAll(async () => {
    steward = await startFilesRuntime(db());
  });
  afterAll(() => steward.close());

  it('indexes only the real files when links lead up or out', async () => {
    const user = 'linker';
    const ran = await steward.run('files.write --path notes/deep/a.md --content "Tern colony census"', user);
    expect(ran.status).toBe('ok');
    const root = steward.runtime.services.files!.vault(user).fs.root;
    symlinkSync('..', path.join(root, 'notes/deep/up'));
    symlinkSync('../..', path.join(root, 'notes/deep/top'));
    symlinkSync(path.dirname(steward.dataDir), path.join(root, 'home'));
    await steward.runtime.services.files!.changed(user);
    await steward.index();
    const rows = await db().query<{ path: string }>(
      `SELECT path FROM content_index WHERE user_id = $1 AND source = 'vault'`,
      [user],
    );
    expect(rows.map((row) => row.path)).toEqual(['notes/deep/a.md']);
  });

  it('stops the walk at its bounds, says so, and drops no index row it did not reach', async () => {
    const user = 'bulky';
    const vault = steward.runtime.services.files!.vault(user);
    for (const name of ['a', 'b', 'c', 'd', 'e']) await vault.write(`bulk/${name}.md`, Buffer.from(name));
    await vault.write('one/two/three/four.md', Buffer.from('deep'));
    const options = { maxBytes: 1000 };
    expect((await indexVault(db(), user, vault.fs, options)).indexed).toBe(6);
    const fewer = await indexVault(db(), user, vault.fs, { ...options, limits: { files: 2 } });
    expect(fewer.limited).toMatch(/only the first 2 files/);
    const shallower = await indexVault(db(), user, vault.fs, { ...options, limits: { depth: 2 } });
    expect(shallower.limited).toMatch(/deeper than 2 levels/);
    expect(await indexedCount(db(), user)).toBe(6);
    // Drive sync needs the whole tree: a partial walk would read as files deleted here.
    expect((await vault.fs.filesBelow('', { limits: { files: 2 } })).files).toHaveLength(2);
  });

  it('the watcher never follows a link out of a vault', async () => {
    const filesDir = path.join(mkdtempSync(path.join(os.tmpdir(), 'steward-watch-')), 'files');
    const outside = mkdtempSync(path.join(os.tmpdir(), 'steward-outside-'));
    mkdirSync(path.join(filesDir, 'linked', 'sub'), { recursive: true });
    mkdirSync(path.join(filesDir, 'control'), { recursive: true });
    symlinkSync(outside, path.join(filesDir, 'linked', 'out'));
    symlinkSync('..', path.join(filesDir, 'linked', 'sub', 'up'));
    const seen: string[] = [];
    const watcher = await watchVaults(filesDir, (vault) => void seen.push(vault), { debounceMs: 50 });
    const count = (vault: string) => seen.filter((item) => item === vault).length;
    const changeControl = async (round: number) => {
      writeFileSync(path.join(filesDir, 'control', `c${round}.md`), 'c');
      await waitFor(() => count('control') >= round);
    };
    try {
      await changeControl(1);
      seen.length = 0;
      writeFileSync(path.join(outside, 'elsewhere.md'), 'not in any vault');
      // Two changes in another vault, each waited for: an event from outside would be in by then.
      await changeControl(1);
      await changeControl(2);
      expect(seen).not.toContain('linked');
      writeFileSync(path.join(filesDir, 'linked', 'real.md'), 'a real change');
      await waitFor(() => count('linked') >= 1);
    } finally {
      await watcher.close();
    }
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
