import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalVault } from '../src/files/index.ts';
import { code, fileStoreContract, value } from './support/contracts/file-store-contract.ts';
import { describeEachBackend } from './support/db.ts';

describeEachBackend('LocalVault', (db) => {
  const make = (userId = `u${Math.random().toString(36).slice(2, 8)}`) => {
    const filesDir = mkdtempSync(path.join(os.tmpdir(), 'steward-vault-'));
    return new LocalVault({ database: db(), filesDir, userId });
  };

  describe('contract', () => fileStoreContract(async () => make()));

  it('keeps the vault in <files dir>/<user folder>/ with archives as plain copies', async () => {
    const vault = make('alice');
    value(await vault.write('notes/plan.md', Buffer.from('first')));
    value(await vault.write('notes/plan.md', Buffer.from('second')));
    const { readFileSync } = await import('node:fs');
    expect(vault.fs.root.endsWith(path.join('files', 'alice')) || vault.fs.root.endsWith('alice')).toBe(true);
    expect(readFileSync(path.join(vault.fs.root, 'notes/plan.md'), 'utf8')).toBe('second');
    expect(readFileSync(path.join(vault.fs.root, '.archive/+notes/+plan.md/v1.md'), 'utf8')).toBe('first');
  });

  it('refuses symbolic links that lead out of the root, and follows those that stay inside', async () => {
    const vault = make();
    const outside = mkdtempSync(path.join(os.tmpdir(), 'steward-outside-'));
    writeFileSync(path.join(outside, 'secret.txt'), 'secret');
    value(await vault.write('inside/real.txt', Buffer.from('ok')));
    symlinkSync(outside, path.join(vault.fs.root, 'escape'));
    symlinkSync(path.join(outside, 'secret.txt'), path.join(vault.fs.root, 'secret-link.txt'));
    symlinkSync(path.join(vault.fs.root, 'inside'), path.join(vault.fs.root, 'alias'));
    symlinkSync(path.join(outside, 'nothing-here'), path.join(vault.fs.root, 'dangling'));
    expect(code(await vault.read('escape/secret.txt'))).toBe('invalid_path');
    expect(code(await vault.read('secret-link.txt'))).toBe('invalid_path');
    expect(code(await vault.write('escape/new.txt', Buffer.from('x')))).toBe('invalid_path');
    expect(code(await vault.write('dangling/new.txt', Buffer.from('x')))).toBe('invalid_path');
    expect(code(await vault.list('escape'))).toBe('invalid_path');
    expect(value(await vault.read('alias/real.txt')).toString()).toBe('ok');
    const listed = value(await vault.list('')).map((entry) => entry.path);
    expect(listed).not.toContain('escape');
    expect(listed).not.toContain('secret-link.txt');
  });

  it("keeps one user out of another user's files", async () => {
    const filesDir = mkdtempSync(path.join(os.tmpdir(), 'steward-vault-'));
    const alice = new LocalVault({ database: db(), filesDir, userId: 'alice' });
    const bob = new LocalVault({ database: db(), filesDir, userId: 'bob' });
    value(await alice.write('diary.md', Buffer.from('private')));
    expect(code(await bob.read('diary.md'))).toBe('not_found');
    expect(code(await bob.read('../alice/diary.md'))).toBe('invalid_path');
    expect(value(await bob.list(''))).toEqual([]);
    mkdirSync(path.join(filesDir, 'bob'), { recursive: true });
  });
});
