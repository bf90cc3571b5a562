import fc from 'fast-check';
import { expect, it } from 'vitest';
import {
  archiveSegments,
  displayPath,
  normalizeUserPath,
  versionFileName,
  versionFromFileName,
  withoutUnsafeCharacters,
} from './vault-path.ts';

it('normalizes what people write and refuses what would leave the root', () => {
  expect(normalizeUserPath('./notes//plan.md')).toEqual({ ok: true, path: 'notes/plan.md' });
  expect(normalizeUserPath('notes/')).toEqual({ ok: true, path: 'notes' });
  expect(normalizeUserPath('', { allowRoot: true })).toEqual({ ok: true, path: '' });
  for (const bad of [
    '',
    '/etc',
    '../x',
    'a/../../b',
    'a\\b',
    'C:/x',
    '~/x',
    '.archive/x',
    '.staging',
    'a\0b',
  ])
    expect(normalizeUserPath(bad).ok, bad).toBe(false);
});

it('never yields a path that leaves the root, whatever the input', () => {
  const segment = fc.constantFrom('..', '.', '', 'a', 'b c', '.archive', '~', 'C:', '\\', 'x..y');
  fc.assert(
    fc.property(fc.array(segment, { maxLength: 6 }), fc.boolean(), (segments, leadingSlash) => {
      const input = `${leadingSlash ? '/' : ''}${segments.join('/')}`;
      const checked = normalizeUserPath(input, { allowRoot: true });
      if (!checked.ok) return;
      const parts = checked.path === '' ? [] : checked.path.split('/');
      expect(parts).not.toContain('..');
      expect(parts).not.toContain('.');
      expect(parts).not.toContain('');
      expect(checked.path.startsWith('/')).toBe(false);
      expect(checked.path.includes('\\')).toBe(false);
      expect(parts[0] === '.archive' || parts[0] === '.staging').toBe(false);
    }),
  );
});

it('names archived versions after the file, keeping its extension', () => {
  expect(versionFileName('notes/plan.md', 3)).toBe('v3.md');
  expect(versionFileName('Makefile', 1)).toBe('v1');
  expect(versionFileName('.env', 2)).toBe('v2');
  expect(versionFromFileName('v12.tar.gz')).toBe(12);
  expect(versionFromFileName('notes.md')).toBeNull();
});

it('refuses control and bidirectional-text characters in names, naming them without repeating them', () => {
  for (const [input, shown] of [
    ['evil\u202Edm.exe', 'U+202E'],
    ['a\nb.md', 'U+000A'],
    ['a\u0085b.md', 'U+0085'],
    ['x\u2067y', 'U+2067'],
    ['rlm\u200F.md', 'U+200F'],
    ['a\0b', 'U+0000'],
  ] as const) {
    const checked = normalizeUserPath(input);
    expect(checked.ok, input).toBe(false);
    if (checked.ok) continue;
    expect(checked.message).toContain(shown);
    expect(checked.message).not.toContain(input);
  }
  expect(normalizeUserPath('notes/ünïcödé – ok.md').ok).toBe(true);
  expect(displayPath('evil\u202Edm.exe')).toBe('evil<U+202E>dm.exe');
  expect(withoutUnsafeCharacters('evil\u202Edm.exe')).toBe('evildm.exe');
});

it('keeps the versions of a path and the paths below it apart in the archive', () => {
  expect(archiveSegments('notes/plan.md')).toEqual(['+notes', '+plan.md']);
  expect(archiveSegments('')).toEqual([]);
  const long = 'n'.repeat(255);
  expect(archiveSegments(long)[0]).toMatch(/^=[0-9a-f]{64}$/);
  // No archive folder of a path is ever a version file name of another.
  fc.assert(
    fc.property(fc.string({ minLength: 1 }), fc.integer({ min: 1, max: 10_000 }), (name, version) => {
      const [segment] = archiveSegments(name);
      expect(versionFromFileName(segment!)).toBeNull();
      expect(segment).not.toBe(versionFileName(name, version));
    }),
  );
});
