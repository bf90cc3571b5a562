import fc from 'fast-check';
import { expect, it } from 'vitest';
import { normalizeUserPath, versionFileName, versionFromFileName } from './vault-path.ts';

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
