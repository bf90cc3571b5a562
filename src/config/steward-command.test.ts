import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { stewardCommand } from './steward-command.ts';

const BIN = fileURLToPath(new URL('../../bin/steward.js', import.meta.url));

it('says `steward` only when that command on the PATH is this installation (npm link), else `npx steward`', () => {
  const linked = mkdtempSync(path.join(os.tmpdir(), 'steward-path-'));
  symlinkSync(BIN, path.join(linked, 'steward'));
  const other = mkdtempSync(path.join(os.tmpdir(), 'steward-path-'));
  writeFileSync(path.join(other, 'steward'), '#!/bin/sh\n', { mode: 0o755 });
  expect(stewardCommand({ PATH: ['/nonexistent', linked].join(path.delimiter) })).toBe('steward');
  expect(stewardCommand({ PATH: other })).toBe('npx steward');
  expect(stewardCommand({ PATH: '' })).toBe('npx steward');
});
