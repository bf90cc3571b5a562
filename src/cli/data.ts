import { createWriteStream } from 'node:fs';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  backupFileName,
  type ExportReport,
  exportUser,
  extractArchive,
  type ForgetReport,
  forgetUser,
  OWNER_USER,
  restoreBackup,
  stewardVersion,
  writeBackupFile,
} from '../backup/index.ts';
import type { ResolvedConfig } from '../config/index.ts';
import { openDatabase, readLockOwner } from '../db/index.ts';
import { userIdProblem } from '../users/index.ts';
import { CliExit, describeFailure, EXIT_ERROR, EXIT_OK, EXIT_USAGE, stewardInvocation } from './common.ts';
import { remoteServer } from './remote.ts';

/** Runs a command body; any failure ends it with exit 1 and one line naming the command. */
async function oneLine(command: string, body: () => Promise<void>): Promise<never> {
  try {
    await body();
  } catch (error) {
    if (error instanceof CliExit) throw error;
    throw new CliExit(EXIT_ERROR, `steward ${command}: ${describeFailure(error).split('\n')[0]}`);
  }
  throw new CliExit(EXIT_OK);
}

/** POSTs to the server that owns the data dir; a refusal becomes the command's one line. */
async function relay(
  remote: { url: string; headers: Record<string, string> },
  route: string,
  body: object,
): Promise<Response> {
  const response = await fetch(`${remote.url}/api${route}`, {
    method: 'POST',
    headers: remote.headers,
    body: JSON.stringify(body),
  });
  if (!response.ok) {
    const answer = (await response.json().catch(() => ({}))) as { message?: string };
    throw new Error(answer.message ?? `the server at ${remote.url} answered ${response.status}`);
  }
  return response;
}

/** Writes a streamed archive to `file` (through a partial file), then checks every entry. */
async function receiveArchive(response: Response, file: string): Promise<void> {
  if (!response.body) throw new Error('the server sent no archive');
  const partial = `${file}.partial-${process.pid}`;
  try {
    await pipeline(Readable.fromWeb(response.body as never), createWriteStream(partial, { mode: 0o600 }));
    await extractArchive(partial, null).catch((error: unknown) => {
      throw new Error(
        `the server's archive did not arrive whole (${describeFailure(error)}); see its log (${stewardInvocation()} logs)`,
      );
    });
    await rename(partial, file);
  } finally {
    await rm(partial, { force: true });
  }
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

/** `steward backup [--output FILE]`: one archive of the database, files, skills and a manifest. */
export async function backupCommand(config: ResolvedConfig, options: { output?: string }): Promise<void> {
  const file = path.resolve(options.output ?? backupFileName(new Date(), 'manual'));
  return oneLine('backup', async () => {
    const remote = remoteServer(config);
    let summary: string;
    if (remote) {
      await receiveArchive(await relay(remote, '/backup', {}), file);
      summary = 'through the running server';
    } else {
      const { database, lock } = await openDatabase(config, { migrate: false });
      try {
        const result = await writeBackupFile(
          {
            database,
            dataDir: config.dataDir,
            skillsDir: config.skillsDir,
            stewardVersion: stewardVersion(),
          },
          file,
        );
        const rows = result.manifest.database.tables.reduce((sum, table) => sum + table.rows, 0);
        summary = `${result.manifest.database.tables.length} tables, ${rows} rows, ${result.files} files, ${result.skills} skill files, ${mb(result.bytes)} before compression${result.skipped.length ? `; left out ${result.skipped.length} links or special files` : ''}`;
      } finally {
        await database.close();
        lock?.release();
      }
    }
    process.stdout.write(
      `Backup written to ${file} (${summary}).\nThe secret key is not in it: keep STEWARD_SECRET_KEY or ${path.join(config.dataDir, 'secret.key')} safe separately, or connected accounts must be connected again after a restore.\n`,
    );
  });
}

/** `steward restore FILE [--force]`: into an empty data dir / database; migrates an older archive. */
export async function restoreCommand(
  config: ResolvedConfig,
  file: string,
  options: { force?: boolean },
): Promise<void> {
  return oneLine('restore', async () => {
    const owner = config.database_url ? null : readLockOwner(config.dataDir);
    if (owner)
      throw new Error(
        `a Steward server (process ${owner.pid}) is running on ${config.dataDir}: stop it, then restore`,
      );
    const report = await restoreBackup(path.resolve(file), {
      dataDir: config.dataDir,
      skillsDir: config.skillsDir,
      ...(config.database_url ? { databaseUrl: config.database_url } : {}),
      force: options.force === true,
      stewardVersion: stewardVersion(),
    });
    const rows = report.load.tables.reduce((sum, table) => sum + table.rows, 0);
    const lines = [
      `Restored ${report.manifest.created_at} (Steward ${report.manifest.steward_version}): ${report.load.tables.length} tables, ${rows} rows, ${report.files} files, ${report.skills} skill files.`,
    ];
    if (report.migrated.length)
      lines.push(`Migrated from the backup's schema: ${report.migrated.join(', ')}.`);
    for (const dropped of report.load.dropped)
      lines.push(`Left out ${dropped.name} (${dropped.rows} rows): ${dropped.reason}.`);
    if (report.replaced) lines.push(`What it replaced is kept in ${report.replaced}.`);
    if (report.manifest.credentials.key_ids.length)
      lines.push(
        `Connected accounts are encrypted with key ${report.manifest.credentials.key_ids.join(', ')}: this Steward needs the same STEWARD_SECRET_KEY or secret.key to use them.`,
      );
    process.stdout.write(`${lines.join('\n')}\n`);
  });
}

/** `steward export --user ID --output DIR`: one person's data, readable and complete. */
export async function exportCommand(
  config: ResolvedConfig,
  options: { user: string; output: string },
): Promise<void> {
  const problem = userIdProblem(options.user);
  if (problem) throw new CliExit(EXIT_USAGE, `steward export: ${problem}`);
  const dir = path.resolve(options.output);
  return oneLine('export', async () => {
    const remote = remoteServer(config);
    let report: Pick<ExportReport, 'conversations' | 'files' | 'skills'> | null = null;
    if (remote) {
      const work = await mkdtemp(path.join(os.tmpdir(), 'steward-export-'));
      try {
        const archive = path.join(work, 'export.tar.gz');
        await receiveArchive(await relay(remote, '/export', { user: options.user }), archive);
        await extractArchive(archive, dir);
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    } else {
      const { database, lock } = await openDatabase(config);
      try {
        report = await exportUser(
          { database, dataDir: config.dataDir, skillsDir: config.skillsDir },
          options.user,
          dir,
        );
      } finally {
        await database.close();
        lock?.release();
      }
    }
    process.stdout.write(
      report
        ? `Exported ${options.user} to ${dir}: ${report.conversations} conversation(s), ${report.files} file(s) with versions, ${report.skills.length} skill(s); see README.md there.\n`
        : `Exported ${options.user} to ${dir}; see README.md there.\n`,
    );
  });
}

/** `steward users delete ID [--yes]`: every row and file of one user; never the owner. */
export async function usersDeleteCommand(
  config: ResolvedConfig,
  userId: string,
  options: { yes?: boolean },
): Promise<void> {
  const problem = userIdProblem(userId);
  if (problem) throw new CliExit(EXIT_USAGE, `steward users delete: ${problem}`);
  if (userId === OWNER_USER)
    throw new CliExit(
      EXIT_ERROR,
      `steward users delete: ${OWNER_USER} is the owner of this Steward and cannot be deleted`,
    );
  if (!options.yes) {
    if (!process.stdin.isTTY)
      throw new CliExit(
        EXIT_USAGE,
        'steward users delete: add --yes to delete without a question (no terminal to ask on)',
      );
    const prompt = createInterface({ input: process.stdin, output: process.stdout });
    const answer = await prompt.question(
      `Delete ${userId} and everything of theirs (conversations, memories, tasks, files with every version, skills, identities, tokens)? This cannot be undone. Type the user id to confirm: `,
    );
    prompt.close();
    if (answer.trim() !== userId)
      throw new CliExit(EXIT_ERROR, 'steward users delete: not confirmed; nothing was deleted');
  }
  return oneLine('users delete', async () => {
    const remote = remoteServer(config);
    let report: ForgetReport;
    if (remote)
      report = (await (await relay(remote, '/users/delete', { user: userId })).json()) as ForgetReport;
    else {
      const { database, lock } = await openDatabase(config);
      try {
        report = await forgetUser({ database, dataDir: config.dataDir, skillsDir: config.skillsDir }, userId);
      } finally {
        await database.close();
        lock?.release();
      }
    }
    const rows = report.rows.map((row) => `${row.table} ${row.rows}`).join(', ');
    const lines = [
      `Deleted ${userId}: ${rows || 'no rows'}; ${report.files} file(s) with versions; ${report.skills.length ? `skills ${report.skills.join(', ')}` : 'no skills'}.`,
    ];
    if (report.unclassified.length)
      lines.push(
        `Not checked (tables this version cannot attribute to users): ${report.unclassified.join(', ')}.`,
      );
    process.stdout.write(`${lines.join('\n')}\n`);
  });
}
