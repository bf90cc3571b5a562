// Run by `npm install` (postinstall): prepares the embedded database template so that the
// first `npm start` on a new data dir is quick. Failing here never fails the install.
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PgBossQueue } from '../jobs/index.ts';
import { silentLogger } from '../logging/index.ts';
import { openPglite } from './client.ts';
import { migrate } from './migrate.ts';
import { forgetPgliteTemplate, templateDirPath, templatePath } from './pglite-template.ts';

export async function buildPgliteTemplate(): Promise<string> {
  const file = templatePath();
  const database = await openPglite(null, { template: false });
  try {
    await migrate(database);
    const jobs = new PgBossQueue(database, silentLogger());
    await jobs.start();
    await jobs.stop();
    if (database.connection.kind !== 'pglite') throw new Error('expected PGlite');
    const dump = await database.connection.client.dumpDataDir('gzip');
    mkdirSync(path.dirname(file), { recursive: true });
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
    renameSync(partial, file);
    forgetPgliteTemplate();
    await unpackTemplate();
    return file;
  } finally {
    await database.close();
  }
}

/** The tarball unpacked once into a directory, which new data dirs on disk copy. */
async function unpackTemplate(): Promise<void> {
  const dir = templateDirPath();
  const staging = `${dir}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  // openPglite puts the cluster in `<data dir>/db`, from the tarball (no directory template yet).
  const database = await openPglite(staging);
  await database.close();
  rmSync(dir, { recursive: true, force: true });
  renameSync(path.join(staging, 'db'), dir);
  rmSync(staging, { recursive: true, force: true });
}

if (import.meta.main) {
  try {
    const file = await buildPgliteTemplate();
    process.stdout.write(`steward: embedded database template ready (${file})\n`);
  } catch (error) {
    process.stderr.write(
      `steward: could not prepare the database template (${(error as Error).message}); the first start will be slower\n`,
    );
  }
}
