import { expect, it } from 'vitest';
import type { FileOutcome, FileStore } from '../../../src/files/index.ts';

const text = (value: string) => Buffer.from(value, 'utf8');

/** The value of an outcome that must have succeeded (fails the test with the failure otherwise). */
export function value<T>(outcome: FileOutcome<T>): T {
  if (!outcome.ok) throw new Error(`expected success, got ${outcome.code}: ${outcome.message}`);
  return outcome.value;
}

/** The failure code of an outcome that must have failed. */
export function code(outcome: FileOutcome<unknown>): string {
  if (outcome.ok) throw new Error('expected a failure, got success');
  return outcome.code;
}

/**
 * What every FileStore must do, whatever is behind it. `fresh()` returns an empty store for
 * one test. Declared inside a describe block by each implementation's test file.
 */
export function fileStoreContract(fresh: () => Promise<FileStore>): void {
  it('creates a file and its folders, reads it back, lists and stats it', async () => {
    const store = await fresh();
    const report = value(await store.write('notes/plan.md', text('# Plan\nship it')));
    expect(report).toMatchObject({ path: 'notes/plan.md', created: true, archivedVersion: null, version: 1 });
    expect(value(await store.read('notes/plan.md')).toString()).toBe('# Plan\nship it');
    expect(value(await store.read('./notes//plan.md')).toString()).toBe('# Plan\nship it');
    expect(value(await store.list('')).map((entry) => [entry.path, entry.kind])).toEqual([
      ['notes', 'folder'],
    ]);
    const listed = value(await store.list('notes'));
    expect(listed.map((entry) => [entry.path, entry.kind, entry.size])).toEqual([
      ['notes/plan.md', 'file', 14],
    ]);
    expect(value(await store.stat('notes/plan.md'))).toMatchObject({ kind: 'file', size: 14 });
  });

  it('archives the previous version before replacing it, and numbers versions oldest first', async () => {
    const store = await fresh();
    value(await store.write('a.txt', text('one')));
    const second = value(await store.write('a.txt', text('two')));
    expect(second).toMatchObject({ created: false, archivedVersion: 1, version: 2 });
    value(await store.write('a.txt', text('three')));
    const versions = value(await store.versions('a.txt'));
    expect(versions.map((item) => [item.version, item.current])).toEqual([
      [1, false],
      [2, false],
      [3, true],
    ]);
    expect(value(await store.readVersion('a.txt', 1)).toString()).toBe('one');
    expect(value(await store.readVersion('a.txt', 2)).toString()).toBe('two');
    expect(value(await store.readVersion('a.txt', 3)).toString()).toBe('three');
    expect(code(await store.readVersion('a.txt', 4))).toBe('not_found');
    // Archives never show up as files.
    expect(value(await store.list('')).map((entry) => entry.path)).toEqual(['a.txt']);
  });

  it('restores an old version, archiving the current one first', async () => {
    const store = await fresh();
    value(await store.write('a.txt', text('one')));
    value(await store.write('a.txt', text('two')));
    const restored = value(await store.restore('a.txt', 1));
    expect(restored).toMatchObject({ restoredVersion: 1, archivedVersion: 2, version: 3 });
    expect(value(await store.read('a.txt')).toString()).toBe('one');
    expect(value(await store.readVersion('a.txt', 2)).toString()).toBe('two');
    expect(value(await store.versions('a.txt')).map((item) => item.version)).toEqual([1, 2, 3]);
    expect(code(await store.restore('a.txt', 9))).toBe('not_found');
  });

  it('deletes by archiving: the file leaves listings and stays restorable', async () => {
    const store = await fresh();
    value(await store.write('docs/old.md', text('keep me')));
    expect(value(await store.delete('docs/old.md'))).toEqual({ path: 'docs/old.md', archivedVersion: 1 });
    expect(code(await store.read('docs/old.md'))).toBe('not_found');
    expect(value(await store.list('')).map((entry) => entry.path)).not.toContain('docs/old.md');
    const versions = value(await store.versions('docs/old.md'));
    expect(versions.map((item) => [item.version, item.current])).toEqual([[1, false]]);
    expect(value(await store.readVersion('docs/old.md', 1)).toString()).toBe('keep me');
    value(await store.restore('docs/old.md', 1));
    expect(value(await store.read('docs/old.md')).toString()).toBe('keep me');
    expect(code(await store.delete('docs/missing.md'))).toBe('not_found');
  });

  it('moves a file with its history, and archives a file it lands on', async () => {
    const store = await fresh();
    value(await store.write('draft.md', text('v1')));
    value(await store.write('draft.md', text('v2')));
    const moved = value(await store.move('draft.md', 'final/report.md'));
    expect(moved).toMatchObject({ from: 'draft.md', to: 'final/report.md', archivedVersion: null });
    expect(code(await store.read('draft.md'))).toBe('not_found');
    expect(value(await store.read('final/report.md')).toString()).toBe('v2');
    if (moved.historyMoved)
      expect(value(await store.readVersion('final/report.md', 1)).toString()).toBe('v1');

    value(await store.write('other.md', text('other')));
    const onto = value(await store.move('other.md', 'final/report.md'));
    expect(onto.archivedVersion).not.toBeNull();
    expect(value(await store.read('final/report.md')).toString()).toBe('other');
    expect(value(await store.readVersion('final/report.md', onto.archivedVersion!)).toString()).toBe('v2');
    expect(code(await store.move('nowhere.md', 'x.md'))).toBe('not_found');
  });

  it('refuses paths that leave the root, and says how to write them', async () => {
    const store = await fresh();
    for (const bad of ['/etc/passwd', '../outside.txt', 'notes/../../x', 'C:\\x', '.archive/a.txt']) {
      const written = await store.write(bad, text('x'));
      expect(code(written), bad).toBe('invalid_path');
      expect(code(await store.read(bad)), bad).toBe('invalid_path');
      expect(code(await store.delete(bad)), bad).toBe('invalid_path');
      expect(code(await store.versions(bad)), bad).toBe('invalid_path');
    }
    expect(code(await store.list('../'))).toBe('invalid_path');
    value(await store.write('a.txt', text('a')));
    expect(code(await store.move('a.txt', '../b.txt'))).toBe('invalid_path');
    expect(code(await store.move('../a.txt', 'b.txt'))).toBe('invalid_path');
    const failure = await store.read('../secret');
    expect(failure.ok ? '' : failure.message).toMatch(/relative|inside/);
  });

  it('tells files and folders apart', async () => {
    const store = await fresh();
    value(await store.write('dir/file.txt', text('x')));
    expect(code(await store.read('dir'))).toBe('not_a_file');
    expect(code(await store.list('dir/file.txt'))).toBe('not_a_folder');
    expect(code(await store.write('dir', text('x')))).toBe('not_a_file');
    expect(code(await store.write('dir/file.txt/inner.txt', text('x')))).toBe('not_a_folder');
    expect(code(await store.read('missing.txt'))).toBe('not_found');
  });

  it('has nothing to recover when nothing was interrupted', async () => {
    const store = await fresh();
    value(await store.write('a.txt', text('a')));
    expect(await store.recover()).toEqual({ completed: 0, rolledBack: 0, quarantined: 0 });
  });
}
