import path from 'node:path';
import type { Database } from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import type { JobQueue } from '../jobs/index.ts';
import { type Logger, silentLogger } from '../logging/index.ts';
import { indexSkillPages, type SkillPage } from './content-index.ts';
import { DriveClient, type DriveConnection, type DriveConnector, FOLDER_MIME } from './drive-client.ts';
import { DriveFileStore } from './drive-file-store.ts';
import { type SyncReport, syncWithDrive } from './drive-sync.ts';
import type { FileOutcome, RecoveryReport, StepHook } from './file-store.ts';
import { enqueueIndex } from './index-jobs.ts';
import { usersWithPendingOperations } from './journal.ts';
import { LocalVault } from './local-vault.ts';
import type { QuarantineRecord } from './quarantine.ts';
import { prepareVaults, type VaultPreparation, vaultOwners } from './vault-layout.ts';

export type FilesSettings = {
  /** Largest file files.read shows (bytes of text). */
  maxReadBytes: number;
  /** Larger files are indexed by name only. */
  maxIndexBytes: number;
  /** The Drive folder files.sync mirrors; unset: a folder named "Steward" in My Drive. */
  driveFolderId?: string;
};

export type FilesServiceOptions = {
  database: Database;
  /** `<data dir>`: vaults live in `userVaultDir(<data dir>/files, user id)`. */
  dataDir: string;
  /** Null in processes that index nothing (the index then catches up at the next reconcile). */
  jobs: JobQueue | null;
  settings: () => FilesSettings;
  drive?: DriveConnector;
  /** The skill pages, indexed for files.search --scope skills. */
  skillPages?: () => SkillPage[];
  onStep?: StepHook;
  /**
   * Told of each file operation recovery set aside (at start or before a later operation),
   * after it is logged: the runtime raises an alert. Must not throw.
   */
  onQuarantine?: (record: QuarantineRecord) => void;
  logger?: Logger;
};

/** The files feature as skills see it: each user's vault, the index queue and Drive. */
export class FilesService {
  readonly database: Database;
  readonly filesDir: string;
  readonly #jobs: JobQueue | null;
  readonly #settings: () => FilesSettings;
  readonly #drive: DriveConnector | undefined;
  readonly #onStep: StepHook | undefined;
  readonly #onQuarantine: (record: QuarantineRecord) => void;
  readonly #owners = new Map<string, string>();
  readonly #skillPages: () => SkillPage[];
  readonly #logger: Logger;

  constructor(options: FilesServiceOptions) {
    this.database = options.database;
    this.filesDir = path.join(options.dataDir, 'files');
    this.#jobs = options.jobs;
    this.#settings = options.settings;
    this.#drive = options.drive;
    this.#onStep = options.onStep;
    this.#onQuarantine = (record) => {
      this.#logger.error(
        { operationId: record.id, userId: record.userId, operation: record.operation, error: record.error },
        `a file ${record.operation} that could be neither completed nor undone was set aside; the rest of the vault works (see steward doctor)`,
      );
      options.onQuarantine?.(record);
    };
    this.#skillPages = options.skillPages ?? (() => []);
    this.#logger = options.logger ?? silentLogger();
  }

  /** Brings the skill pages' index rows up to date (only changed pages are written). */
  async refreshSkillIndex(): Promise<void> {
    await indexSkillPages(this.database, this.#skillPages());
  }

  settings(): FilesSettings {
    return this.#settings();
  }

  vault(userId: string): LocalVault {
    return new LocalVault({
      database: this.database,
      filesDir: this.filesDir,
      userId,
      onQuarantine: this.#onQuarantine,
      ...(this.#onStep ? { onStep: this.#onStep } : {}),
    });
  }

  /**
   * Brings the files root to the current layout (see prepareVaults); run at start-up before
   * recovery. Logs what moved and what could not be; never throws for one vault's trouble.
   */
  async prepare(): Promise<VaultPreparation> {
    let prepared: VaultPreparation;
    try {
      prepared = await prepareVaults({ database: this.database, filesDir: this.filesDir });
    } catch (error) {
      // The files root itself is unusable (permissions, a full disk): file skills fail, the rest runs.
      this.#logger.error({ err: error, filesDir: this.filesDir }, 'the vaults could not be prepared');
      return { movedUsers: [], migratedVersions: 0, problems: [errorMessage(error)] };
    }
    for (const moved of prepared.movedUsers)
      this.#logger.warn(moved, 'moved a vault to its own folder (user ids that nested shared one before)');
    if (prepared.migratedVersions > 0)
      this.#logger.info(
        { versions: prepared.migratedVersions },
        'moved archived versions to the new archive layout',
      );
    for (const problem of prepared.problems) this.#logger.error({ problem }, 'vault layout');
    return prepared;
  }

  /** A change seen in the vault folder `dirName` (the watcher): re-indexes its owner's files. */
  async vaultChanged(dirName: string): Promise<void> {
    let userId = this.#owners.get(dirName);
    if (userId === undefined) {
      const owners = await vaultOwners(this.database, this.filesDir).catch(() => new Map<string, string>());
      for (const [name, owner] of owners) this.#owners.set(name, owner);
      userId = owners.get(dirName);
    }
    if (userId !== undefined) await this.changed(userId);
  }

  /**
   * Called after every change to a user's files: queues the re-index of that vault. Never
   * fails the change itself; a lost job is made up by the next reconcile pass.
   */
  async changed(userId: string): Promise<void> {
    if (!this.#jobs) return;
    await enqueueIndex(this.#jobs, userId).catch((error: unknown) =>
      this.#logger.warn({ err: error, userId }, 'could not queue the files index job'),
    );
  }

  /** The user's Drive connection, or null when Google is not connected. */
  async driveConnection(userId: string): Promise<DriveConnection | null> {
    return this.#drive ? this.#drive(userId) : null;
  }

  /** Syncs a user's vault with their Drive folder (see syncWithDrive). */
  async sync(
    userId: string,
    connection: DriveConnection,
    signal?: AbortSignal,
  ): Promise<FileOutcome<SyncReport>> {
    const client = await DriveClient.connect(connection);
    const folderId = connection.folderId ?? this.#settings().driveFolderId;
    const folder = folderId ? await client.get(folderId) : await stewardFolder(client);
    const drive = new DriveFileStore({ client, folderId: folder.id, database: this.database, userId });
    return syncWithDrive({
      database: this.database,
      userId,
      vault: this.vault(userId),
      drive,
      client,
      folderName: folder.name,
      ...(signal ? { signal } : {}),
    });
  }

  /**
   * Settles every file operation a crash left unfinished, for every user (at start-up). An
   * operation that cannot be settled is set aside; a vault that cannot be opened at all is
   * logged and left: one user's files never stop the server from starting.
   */
  async recoverAll(): Promise<RecoveryReport> {
    const total: RecoveryReport = { completed: 0, rolledBack: 0, quarantined: 0 };
    for (const userId of await usersWithPendingOperations(this.database, 'local')) {
      try {
        const report = await this.vault(userId).recover();
        total.completed += report.completed;
        total.rolledBack += report.rolledBack;
        total.quarantined += report.quarantined;
      } catch (error) {
        this.#logger.error(
          { err: error, userId },
          'the vault could not be recovered; its pending operations wait for the next start',
        );
      }
    }
    return total;
  }
}

/** The folder named "Steward" at the top of My Drive, created on first use. */
async function stewardFolder(client: DriveClient) {
  const found = (await client.children('root')).find(
    (file) => file.name === 'Steward' && file.mimeType === FOLDER_MIME,
  );
  return found ?? client.createFolder('Steward', 'root');
}
