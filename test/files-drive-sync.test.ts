import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachBackend } from './support/db.ts';
import { makePdf } from './support/documents.ts';
import { FakeDrive, tokenAuth } from './support/fake-drive.ts';
import { type FilesRuntime, startFilesRuntime } from './support/files-runtime.ts';

const DOC = 'application/vnd.google-apps.document';
const SHEET = 'application/vnd.google-apps.spreadsheet';

describeEachBackend('files.sync with Google Drive', (db) => {
  const drive = new FakeDrive();
  let steward: FilesRuntime;
  let folderId = '';
  let vault = '';
  beforeAll(async () => {
    await drive.start();
    const folder = drive.addFolder('Work');
    folderId = folder.id;
    steward = await startFilesRuntime(db(), {
      drive: async (userId) =>
        userId === 'local' ? { auth: tokenAuth(drive.token), rootUrl: drive.url, folderId } : null,
    });
    vault = path.join(steward.dataDir, 'files', 'local');
  });
  afterAll(async () => {
    await steward.close();
    await drive.stop();
  });

  const sync = async () => {
    const result = await steward.run('files.sync');
    expect(result.status, result.content).toBe('ok');
    return result;
  };
  const local = (file: string) => readFileSync(path.join(vault, file), 'utf8');
  const fileIn = (parent: string, name: string) =>
    drive.childrenOf(parent).find((file) => file.name === name)!;

  it('pulls the Drive folder: Docs as markdown, Sheets as CSV, PDFs as they are, folders as folders', async () => {
    drive.addFile('Plan', folderId, '# Plan\n\nLaunch the ferry service.', DOC);
    drive.addFile('Budget', folderId, 'item,cost\nrope,12', SHEET);
    drive.addFile('scan.pdf', folderId, makePdf(['Harbour permit number 7']), 'application/pdf');
    const notes = drive.addFolder('notes', folderId);
    drive.addFile('a.txt', notes.id, 'alpha');
    const { content, metadata } = await sync();
    expect(metadata.pulled).toEqual(['Budget.csv', 'notes/a.txt', 'Plan.md', 'scan.pdf'].sort());
    expect(content).toMatch(/Pulled from Drive \(4\)/);
    expect(local('Plan.md')).toBe('# Plan\n\nLaunch the ferry service.');
    expect(local('Budget.csv')).toBe('item,cost\nrope,12');
    expect(local('notes/a.txt')).toBe('alpha');
    expect(readFileSync(path.join(vault, 'scan.pdf')).subarray(0, 5).toString()).toBe('%PDF-');
    await steward.index();
    expect((await steward.run('files.search --query permit')).content).toContain('scan.pdf');
    expect((await sync()).content).toMatch(/already in sync \(4 files\)/);
  });

  it('pushes a local edit as a new Drive revision after keeping the previous one', async () => {
    await steward.run('files.write --path notes/a.txt --content "alpha, edited here"');
    const { metadata } = await sync();
    expect(metadata.pushed).toEqual(['notes/a.txt']);
    const file = fileIn(fileIn(folderId, 'notes').id, 'a.txt');
    expect(drive.content(file.id)).toBe('alpha, edited here');
    expect(file.revisions.map((revision) => revision.keepForever)).toEqual([true, false]);
    drive.purgeRevisions();
    expect(file.revisions[0]!.content.toString()).toBe('alpha');
  });

  it('pulls an edit made in Drive, archiving the local version first', async () => {
    const file = fileIn(fileIn(folderId, 'notes').id, 'a.txt');
    drive.edit(file.id, 'alpha, edited in Drive');
    const { metadata } = await sync();
    expect(metadata.pulled).toEqual(['notes/a.txt']);
    expect(local('notes/a.txt')).toBe('alpha, edited in Drive');
    expect(readFileSync(path.join(vault, '.archive/+notes/+a.txt/v2.txt'), 'utf8')).toBe(
      'alpha, edited here',
    );
  });

  it('keeps both versions of a file changed on both sides, and says so until the user chooses', async () => {
    const file = fileIn(fileIn(folderId, 'notes').id, 'a.txt');
    drive.edit(file.id, 'the Drive side');
    await steward.run('files.write --path notes/a.txt --content "the local side"');
    const first = await sync();
    expect(first.content).toMatch(/Conflict: notes\/a\.txt changed both here and in Drive/);
    expect(local('notes/a.txt')).toBe('the local side');
    expect(local('notes/a (Drive conflict).txt')).toBe('the Drive side');
    expect(drive.content(file.id)).toBe('the Drive side');
    expect((await sync()).content).toMatch(/Conflict: notes\/a\.txt/);

    await steward.run("files.delete --path 'notes/a (Drive conflict).txt'");
    const resolved = await sync();
    expect(resolved.metadata.pushed).toEqual(['notes/a.txt']);
    expect(drive.content(file.id)).toBe('the local side');
  });

  it('writes a markdown edit back into the Google Doc after archiving a copy', async () => {
    const doc = fileIn(folderId, 'Plan');
    await steward.run('files.write --path Plan.md --content "# Plan\n\nLaunch the ferry service in May."');
    const { metadata } = await sync();
    expect(metadata.pushed).toEqual(['Plan.md']);
    expect(drive.content(doc.id)).toBe('# Plan\n\nLaunch the ferry service in May.');
    const archive = fileIn(folderId, '.archive');
    const copy = drive.childrenOf(archive.id).find((item) => item.appProperties.stewardPath === 'Plan.md')!;
    expect(drive.content(copy.id)).toBe('# Plan\n\nLaunch the ferry service.');
  });

  it('leaves exported Sheets read-only here', async () => {
    await steward.run('files.write --path Budget.csv --content "item,cost\nrope,15"');
    const result = await sync();
    expect(result.content).toMatch(/Skipped Budget\.csv: .*read-only here; edit it in Drive/);
  });

  it('archives on the other side what was deleted on one side', async () => {
    await steward.run('files.delete --path scan.pdf');
    const pushedDelete = await sync();
    expect(pushedDelete.metadata.archivedInDrive).toEqual(['scan.pdf']);
    expect(drive.childrenOf(folderId).map((file) => file.name)).not.toContain('scan.pdf');
    expect(drive.childrenOf(fileIn(folderId, '.archive').id).map((file) => file.name)).toContain('scan.pdf');

    const notes = fileIn(folderId, 'notes');
    drive.addFile('b.txt', notes.id, 'beta');
    await sync();
    fileIn(notes.id, 'b.txt').trashed = true;
    const pulledDelete = await sync();
    expect(pulledDelete.metadata.archivedHere).toEqual(['notes/b.txt']);
    expect(existsSync(path.join(vault, 'notes/b.txt'))).toBe(false);
    expect(readFileSync(path.join(vault, '.archive/+notes/+b.txt/v1.txt'), 'utf8')).toBe('beta');
  });

  it('reports Drive being down as an error naming Google Drive, changing nothing', async () => {
    drive.failNext(503, 5);
    const result = await steward.run('files.sync');
    expect(result.status).toBe('error');
    expect(result.content).toMatch(/Google Drive is unavailable \(503\)/);
  });

  it("reaches Drive through the owner's Google service account and GOOGLE_API_URL when wired by the runtime", async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const keyFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'steward-sa-')), 'key.json');
    writeFileSync(
      keyFile,
      JSON.stringify({
        type: 'service_account',
        client_email: 'steward@example.iam.gserviceaccount.com',
        private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
      }),
    );
    const folder = drive.addFolder('Owner files');
    drive.addFile('welcome.md', folder.id, '# Welcome aboard');
    const wired = await startFilesRuntime(db(), {
      yaml: `google:\n  application_credentials: "${keyFile}"\n  impersonate: owner@example.com\n  api_url: "${drive.url}"\nfiles:\n  drive_folder_id: "${folder.id}"\n`,
    });
    try {
      const result = await wired.run('files.sync');
      expect(result.status, result.content).toBe('ok');
      expect(result.metadata.pulled).toEqual(['welcome.md']);
      expect(drive.tokenGrants).toContain('urn:ietf:params:oauth:grant-type:jwt-bearer');
      expect((await wired.run('files.sync', 'guest')).content).toMatch(/not connected/);
    } finally {
      await wired.close();
    }
  });

  it('tells a user without a connection how to connect', async () => {
    const result = await steward.run('files.sync', 'someone-else');
    expect(result.content).toMatch(/steward connect google/);
  });
});
