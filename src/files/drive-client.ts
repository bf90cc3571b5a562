import { Readable } from 'node:stream';
import type { drive_v3 } from '@googleapis/drive/build/v3.js';
import type { AuthClient } from 'google-auth-library';
import { StewardError } from '../errors.ts';

/**
 * What files.sync needs to reach one user's Google Drive. The auth client is the user's
 * connected Google account (OAuth or a delegated service account); `rootUrl` overrides
 * https://www.googleapis.com/ (GOOGLE_API_URL); `folderId` overrides the settings' folder.
 */
export type DriveConnection = { auth: AuthClient; rootUrl?: string; folderId?: string };

/** Resolves a user's Drive connection; null when the user has not connected Google. */
export type DriveConnector = (userId: string) => Promise<DriveConnection | null>;

export const FOLDER_MIME = 'application/vnd.google-apps.folder';
export const GOOGLE_DOC_MIME = 'application/vnd.google-apps.document';
export const GOOGLE_SHEET_MIME = 'application/vnd.google-apps.spreadsheet';
export const GOOGLE_SLIDES_MIME = 'application/vnd.google-apps.presentation';

/** A Drive file with the fields Steward reads. */
export type DriveFile = {
  id: string;
  name: string;
  mimeType: string;
  parents: string[];
  modifiedTime: string;
  md5Checksum: string | null;
  size: number;
  headRevisionId: string | null;
  appProperties: Record<string, string>;
};

export type DriveRevision = { id: string; modifiedTime: string; size: number; keepForever: boolean };

const FILE_FIELDS = 'id,name,mimeType,parents,modifiedTime,md5Checksum,size,headRevisionId,appProperties';

/** A Drive request that failed; the message names Drive and what to do, never a credential. */
export class DriveError extends StewardError {
  readonly status: number | null;
  constructor(status: number | null, action: string, options?: { cause?: unknown }) {
    super('drive_failed', `Google Drive ${describe(status)} while ${action}.`, options);
    this.name = 'DriveError';
    this.status = status;
  }
}

function describe(status: number | null): string {
  if (status === 401)
    return 'refused the connection (401: the Google token expired or was revoked; reconnect with `steward connect google`)';
  if (status === 403)
    return 'denied access (403: the connected account may not use this folder, or the Drive API is not enabled; reconnect with `steward connect google`)';
  if (status === 404) return 'could not find the file or folder (404)';
  if (status === 429) return 'is rate-limiting requests (429); try again in a minute';
  if (status !== null && status >= 500) return `is unavailable (${status}); try again later`;
  if (status !== null) return `answered ${status}`;
  return 'could not be reached';
}

/**
 * The Drive v3 calls Steward makes, over googleapis' generated client (loaded on first use:
 * googleapis' generated clients are slow to import). Every call goes to
 * `rootUrl`, uploads included.
 */
export class DriveClient {
  readonly #drive: drive_v3.Drive;
  readonly #rootUrl: string;

  private constructor(drive: drive_v3.Drive, rootUrl: string) {
    this.#drive = drive;
    this.#rootUrl = rootUrl;
  }

  static async connect(connection: DriveConnection): Promise<DriveClient> {
    const { drive_v3: api } = await import('@googleapis/drive/build/v3.js');
    const rootUrl = (connection.rootUrl ?? 'https://www.googleapis.com/').replace(/\/*$/, '/');
    // googleapis types `auth` as a few concrete clients; it only calls `request()`, which every AuthClient has.
    const auth = connection.auth as unknown as drive_v3.Options['auth'];
    return new DriveClient(new api.Drive({ auth, rootUrl }), rootUrl);
  }

  async #call<T>(action: string, fn: (options: { rootUrl: string }) => Promise<{ data: T }>): Promise<T> {
    try {
      return (await fn({ rootUrl: this.#rootUrl })).data;
    } catch (error) {
      const status = (error as { status?: number; response?: { status?: number } }).status;
      throw new DriveError(
        status ?? (error as { response?: { status?: number } }).response?.status ?? null,
        action,
        {
          cause: error,
        },
      );
    }
  }

  /** The files and folders directly inside a folder (not trashed). */
  async children(folderId: string, signal?: AbortSignal): Promise<DriveFile[]> {
    const files: DriveFile[] = [];
    let pageToken: string | undefined;
    do {
      signal?.throwIfAborted();
      const page = await this.#call('listing a folder', (options) =>
        this.#drive.files.list(
          {
            q: `'${folderId.replace(/'/g, "\\'")}' in parents and trashed = false`,
            fields: `nextPageToken,files(${FILE_FIELDS})`,
            pageSize: 1000,
            ...(pageToken ? { pageToken } : {}),
          },
          options,
        ),
      );
      files.push(...(page.files ?? []).map(toDriveFile));
      pageToken = page.nextPageToken ?? undefined;
    } while (pageToken);
    return files;
  }

  async get(fileId: string): Promise<DriveFile> {
    return toDriveFile(
      await this.#call('reading file details', (options) =>
        this.#drive.files.get({ fileId, fields: FILE_FIELDS }, options),
      ),
    );
  }

  async download(fileId: string): Promise<Buffer> {
    const data = await this.#call('downloading a file', (options) =>
      this.#drive.files.get({ fileId, alt: 'media' }, { ...options, responseType: 'arraybuffer' }),
    );
    return Buffer.from(data as unknown as ArrayBuffer);
  }

  async export(fileId: string, mimeType: string): Promise<Buffer> {
    const data = await this.#call('exporting a Google document', (options) =>
      this.#drive.files.export({ fileId, mimeType }, { ...options, responseType: 'arraybuffer' }),
    );
    return Buffer.from(data as unknown as ArrayBuffer);
  }

  async createFolder(name: string, parentId: string): Promise<DriveFile> {
    return toDriveFile(
      await this.#call('creating a folder', (options) =>
        this.#drive.files.create(
          { requestBody: { name, mimeType: FOLDER_MIME, parents: [parentId] }, fields: FILE_FIELDS },
          options,
        ),
      ),
    );
  }

  async create(
    metadata: { name: string; parentId: string; appProperties?: Record<string, string> },
    content: Buffer,
    mimeType: string,
  ): Promise<DriveFile> {
    return toDriveFile(
      await this.#call('uploading a file', (options) =>
        this.#drive.files.create(
          {
            requestBody: {
              name: metadata.name,
              parents: [metadata.parentId],
              ...(metadata.appProperties ? { appProperties: metadata.appProperties } : {}),
            },
            media: { mimeType, body: Readable.from([content]) },
            keepRevisionForever: true,
            fields: FILE_FIELDS,
          },
          options,
        ),
      ),
    );
  }

  /** Uploads new content: Drive keeps it as a new revision of the same file. */
  async upload(fileId: string, content: Buffer, mimeType: string): Promise<DriveFile> {
    return toDriveFile(
      await this.#call('uploading a new revision', (options) =>
        this.#drive.files.update(
          {
            fileId,
            media: { mimeType, body: Readable.from([content]) },
            keepRevisionForever: true,
            fields: FILE_FIELDS,
          },
          options,
        ),
      ),
    );
  }

  /** Renames or re-parents a file, or changes its app properties. */
  async update(
    fileId: string,
    change: {
      name?: string;
      addParents?: string;
      removeParents?: string;
      appProperties?: Record<string, string | null>;
    },
  ): Promise<DriveFile> {
    const { addParents, removeParents, ...body } = change;
    return toDriveFile(
      await this.#call('moving or renaming a file', (options) =>
        this.#drive.files.update(
          {
            fileId,
            requestBody: body as drive_v3.Schema$File,
            ...(addParents ? { addParents } : {}),
            ...(removeParents ? { removeParents } : {}),
            fields: FILE_FIELDS,
          },
          options,
        ),
      ),
    );
  }

  async copy(
    fileId: string,
    name: string,
    parentId: string,
    appProperties: Record<string, string>,
  ): Promise<DriveFile> {
    return toDriveFile(
      await this.#call('archiving a copy', (options) =>
        this.#drive.files.copy(
          { fileId, requestBody: { name, parents: [parentId], appProperties }, fields: FILE_FIELDS },
          options,
        ),
      ),
    );
  }

  async revisions(fileId: string): Promise<DriveRevision[]> {
    const data = await this.#call('listing revisions', (options) =>
      this.#drive.revisions.list(
        { fileId, fields: 'revisions(id,modifiedTime,size,keepForever)', pageSize: 1000 },
        options,
      ),
    );
    return (data.revisions ?? []).map((revision) => ({
      id: revision.id ?? '',
      modifiedTime: revision.modifiedTime ?? '',
      size: Number(revision.size ?? 0),
      keepForever: revision.keepForever === true,
    }));
  }

  /** Marks a revision to be kept forever (Drive otherwise purges old revisions of binary files). */
  async keepRevision(fileId: string, revisionId: string): Promise<void> {
    await this.#call('archiving a revision', (options) =>
      this.#drive.revisions.update({ fileId, revisionId, requestBody: { keepForever: true } }, options),
    );
  }

  async downloadRevision(fileId: string, revisionId: string): Promise<Buffer> {
    const data = await this.#call('downloading a revision', (options) =>
      this.#drive.revisions.get(
        { fileId, revisionId, alt: 'media' },
        { ...options, responseType: 'arraybuffer' },
      ),
    );
    return Buffer.from(data as unknown as ArrayBuffer);
  }
}

function toDriveFile(file: drive_v3.Schema$File): DriveFile {
  return {
    id: file.id ?? '',
    name: file.name ?? '',
    mimeType: file.mimeType ?? 'application/octet-stream',
    parents: file.parents ?? [],
    modifiedTime: file.modifiedTime ?? '',
    md5Checksum: file.md5Checksum ?? null,
    size: Number(file.size ?? 0),
    headRevisionId: file.headRevisionId ?? null,
    appProperties: (file.appProperties as Record<string, string> | undefined) ?? {},
  };
}

/** A file's content version as sync compares it: the checksum, or for Google documents the modification time. */
export const remoteVersion = (file: DriveFile) => file.md5Checksum ?? `t:${file.modifiedTime}`;
