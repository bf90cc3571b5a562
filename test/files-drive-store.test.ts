import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DriveClient, DriveFileStore, type StepHook } from '../src/files/index.ts';
import { code, fileStoreContract, value } from './support/contracts/file-store-contract.ts';
import { describeEachBackend } from './support/db.ts';
import { FakeDrive, tokenAuth } from './support/fake-drive.ts';
import { fileStoreFaults } from './support/file-store-faults.ts';

describeEachBackend('DriveFileStore', (db) => {
  const drive = new FakeDrive();
  let client: DriveClient;
  beforeAll(async () => {
    await drive.start();
    client = await DriveClient.connect({ auth: tokenAuth(drive.token), rootUrl: drive.url });
  });
  afterAll(() => drive.stop());

  const make = () => {
    const folder = drive.addFolder(`Steward ${Math.random().toString(36).slice(2, 8)}`);
    const userId = `u${Math.random().toString(36).slice(2, 10)}`;
    return {
      folder,
      userId,
      store: (hook?: StepHook) =>
        new DriveFileStore({ client, folderId: folder.id, database: db(), userId, onStep: hook }),
    };
  };

  describe('contract', () => fileStoreContract(async () => make().store()));

  describe('fault injection', () =>
    fileStoreFaults({
      fresh: async () => {
        const made = make();
        return {
          store: made.store,
          pending: async () =>
            (
              await db().query(`SELECT 1 FROM file_operations WHERE user_id = $1 AND status = 'pending'`, [
                made.userId,
              ])
            ).length,
        };
      },
    }));

  it('keeps the replaced revision when Drive purges old revisions', async () => {
    const { store } = make();
    value(await store().write('report.txt', Buffer.from('draft')));
    value(await store().write('report.txt', Buffer.from('final')));
    drive.purgeRevisions();
    expect(value(await store().readVersion('report.txt', 1)).toString()).toBe('draft');
  });

  it('reads and edits Google Docs as markdown, archiving a copy first', async () => {
    const { folder, store } = make();
    const doc = drive.addFile('Plan', folder.id, '# Plan\n\nfirst', 'application/vnd.google-apps.document');
    expect(value(await store().read('Plan.md')).toString()).toBe('# Plan\n\nfirst');
    const report = value(await store().write('Plan.md', Buffer.from('# Plan\n\nsecond')));
    expect(report).toMatchObject({ archivedVersion: 1, version: 2 });
    expect(drive.content(doc.id)).toBe('# Plan\n\nsecond');
    expect(value(await store().readVersion('Plan.md', 1)).toString()).toBe('# Plan\n\nfirst');
  });

  it('turns Drive failures into errors that name Drive and the fix, without the token', async () => {
    const { store } = make();
    drive.failNext(503, 5);
    await expect(store().list('')).rejects.toThrow(/Google Drive is unavailable \(503\)/);
    const bad = new DriveFileStore({
      client: await DriveClient.connect({ auth: tokenAuth('revoked-token'), rootUrl: drive.url }),
      folderId: 'root',
      database: db(),
      userId: 'someone',
    });
    const failure = await bad.list('').catch((error: Error) => error.message);
    expect(failure).toMatch(/steward connect google/);
    expect(failure).not.toContain('revoked-token');
    expect(code(await store().read('../x'))).toBe('invalid_path');
  });
});
