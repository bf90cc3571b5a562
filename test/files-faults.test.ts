import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe } from 'vitest';
import { LocalVault } from '../src/files/index.ts';
import { describeEachBackend } from './support/db.ts';
import { fileStoreFaults } from './support/file-store-faults.ts';

describeEachBackend('file operations under fault injection', (db) => {
  describe('local vault', () =>
    fileStoreFaults({
      fresh: async () => {
        const filesDir = mkdtempSync(path.join(os.tmpdir(), 'steward-faults-'));
        const userId = `u${Math.random().toString(36).slice(2, 10)}`;
        return {
          store: (hook) => new LocalVault({ database: db(), filesDir, userId, onStep: hook }),
          pending: async () =>
            (
              await db().query(`SELECT 1 FROM file_operations WHERE user_id = $1 AND status = 'pending'`, [
                userId,
              ])
            ).length,
        };
      },
    }));
});
