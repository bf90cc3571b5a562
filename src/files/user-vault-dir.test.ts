import fc from 'fast-check';
import { expect, it } from 'vitest';
import { userVaultDir, vaultDirName } from './user-vault-dir.ts';

const userId = fc
  .stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.:@/-]{0,127}$/)
  .filter((id) => !id.includes('..') && !id.includes('//') && !id.endsWith('/'));

it('maps user ids to one folder name each, readable for plain ids', () => {
  expect(vaultDirName('local')).toBe('local');
  expect(vaultDirName('telegram:12345')).toBe('telegram:12345');
  expect(vaultDirName('googlechat:users/777')).toBe('googlechat:users%2F777');
  expect(vaultDirName('slack:U42')).toBe('slack:^U42');
  expect(vaultDirName('A'.repeat(128))).toMatch(/^#[0-9a-f]{64}$/);
  expect(userVaultDir('/data/files', 'nest/child')).toBe('/data/files/nest%2Fchild');
  expect(() => vaultDirName('../etc')).toThrow(/not a valid user id/);
});

it('never gives two user ids the same folder, even where case is ignored, nor one with a slash', () => {
  fc.assert(
    fc.property(userId, userId, (a, b) => {
      const nameA = vaultDirName(a);
      expect(nameA).not.toContain('/');
      expect(nameA === '.' || nameA === '..' || nameA.startsWith('.')).toBe(false);
      expect(Buffer.byteLength(nameA)).toBeLessThanOrEqual(255);
      if (a !== b) expect(nameA.toLowerCase()).not.toBe(vaultDirName(b).toLowerCase());
      // The ids most likely to meet on a case-insensitive disk: the same letters, other cases.
      const swapped = [...a]
        .map((char) => (char === char.toLowerCase() ? char.toUpperCase() : char.toLowerCase()))
        .join('');
      if (swapped !== a) expect(nameA.toLowerCase()).not.toBe(vaultDirName(swapped).toLowerCase());
    }),
    { numRuns: 2000 },
  );
});
