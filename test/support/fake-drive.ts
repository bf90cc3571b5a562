import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { OAuth2Client } from 'google-auth-library';

const FOLDER = 'application/vnd.google-apps.folder';
const DOC = 'application/vnd.google-apps.document';
const SHEET = 'application/vnd.google-apps.spreadsheet';

type Revision = { id: string; content: Buffer; modifiedTime: string; keepForever: boolean };

export type FakeDriveFile = {
  id: string;
  name: string;
  mimeType: string;
  parents: string[];
  trashed: boolean;
  appProperties: Record<string, string>;
  revisions: Revision[];
  modifiedTime: string;
};

export type FakeDriveRequest = { method: string; path: string; query: Record<string, string> };

/**
 * Google Drive v3 over real HTTP for googleapis pointed at it (rootUrl): files (list with
 * `'<id>' in parents and trashed = false`, get, media download, export, create, multipart
 * upload, update, copy) and revisions (list, get media, update keepForever). Google Docs hold
 * markdown. `failNext` makes the next requests answer an error status.
 */
export class FakeDrive {
  readonly files = new Map<string, FakeDriveFile>();
  readonly requests: FakeDriveRequest[] = [];
  /** grant_type of every token request. */
  readonly tokenGrants: string[] = [];
  readonly token: string;
  #server: Server | null = null;
  #sequence = 0;
  #clock = Date.parse('2026-01-01T00:00:00Z');
  #failures: number[] = [];
  url = '';

  constructor(options: { token?: string } = {}) {
    this.token = options.token ?? 'fake-drive-token';
    this.files.set('root', this.#file({ id: 'root', name: 'My Drive', mimeType: FOLDER, parents: [] }));
  }

  async start(): Promise<this> {
    this.#server = createServer((request, response) => {
      void this.#handle(request, response).catch((error: unknown) => {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { code: 500, message: String(error) } }));
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    const address = this.#server.address();
    if (typeof address !== 'object' || !address) throw new Error('no address');
    this.url = `http://127.0.0.1:${address.port}/`;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  /** The next `count` requests answer `status`. */
  failNext(status: number, count = 1): void {
    for (let i = 0; i < count; i++) this.#failures.push(status);
  }

  addFolder(name: string, parent = 'root'): FakeDriveFile {
    const folder = this.#file({ name, mimeType: FOLDER, parents: [parent] });
    this.files.set(folder.id, folder);
    return folder;
  }

  /** A file as someone editing Drive directly would add it. */
  addFile(name: string, parent: string, content: string | Buffer, mimeType = 'text/plain'): FakeDriveFile {
    const file = this.#file({ name, mimeType, parents: [parent] });
    this.#addRevision(file, Buffer.from(content));
    this.files.set(file.id, file);
    return file;
  }

  /** An edit made in Drive: a new revision. */
  edit(id: string, content: string | Buffer): void {
    this.#addRevision(this.files.get(id)!, Buffer.from(content));
  }

  content(id: string): string {
    return this.files.get(id)!.revisions.at(-1)!.content.toString('utf8');
  }

  /** What Drive does to binary files' old revisions: drops those not marked keep-forever. */
  purgeRevisions(): void {
    for (const file of this.files.values()) {
      if (file.mimeType.startsWith('application/vnd.google-apps.')) continue;
      file.revisions = file.revisions.filter(
        (revision, index) => revision.keepForever || index === file.revisions.length - 1,
      );
    }
  }

  childrenOf(parent: string): FakeDriveFile[] {
    return [...this.files.values()].filter((file) => file.parents.includes(parent) && !file.trashed);
  }

  #file(
    fields: Partial<FakeDriveFile> & Pick<FakeDriveFile, 'name' | 'mimeType' | 'parents'>,
  ): FakeDriveFile {
    return {
      id: `f${++this.#sequence}${Math.random().toString(36).slice(2, 8)}`,
      trashed: false,
      appProperties: {},
      revisions: [],
      modifiedTime: this.#tick(),
      ...fields,
    };
  }

  #tick(): string {
    this.#clock += 1000;
    return new Date(this.#clock).toISOString();
  }

  #addRevision(file: FakeDriveFile, content: Buffer): void {
    const modifiedTime = this.#tick();
    file.revisions.push({ id: `r${++this.#sequence}`, content, modifiedTime, keepForever: false });
    file.modifiedTime = modifiedTime;
  }

  #resource(file: FakeDriveFile) {
    const native = file.mimeType.startsWith('application/vnd.google-apps.');
    const head = file.revisions.at(-1);
    return {
      kind: 'drive#file',
      id: file.id,
      name: file.name,
      mimeType: file.mimeType,
      parents: file.parents,
      trashed: file.trashed,
      modifiedTime: file.modifiedTime,
      appProperties: file.appProperties,
      ...(native || !head
        ? {}
        : {
            md5Checksum: createHash('md5').update(head.content).digest('hex'),
            size: String(head.content.length),
            headRevisionId: head.id,
          }),
    };
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://fake');
    const query = Object.fromEntries(url.searchParams);
    this.requests.push({ method: request.method ?? 'GET', path: url.pathname, query });
    const body = await readBody(request);
    const json = (status: number, value: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(value));
    };
    const error = (status: number, message: string) =>
      json(status, { error: { code: status, message, errors: [{ message }] } });
    // Google's token endpoint (under GOOGLE_API_URL): a refresh token or a service account's signed JWT gets the token.
    if (request.method === 'POST' && url.pathname === '/token') {
      this.tokenGrants.push(new URLSearchParams(body.toString()).get('grant_type') ?? '');
      return json(200, { access_token: this.token, token_type: 'Bearer', expires_in: 3600 });
    }
    if (request.headers.authorization !== `Bearer ${this.token}`)
      return error(401, 'Request had invalid authentication credentials.');
    const failing = this.#failures.shift();
    if (failing) return error(failing, `simulated ${failing}`);
    const media = (content: Buffer) => {
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      response.end(content);
    };

    const route = url.pathname.replace(/^\/(upload\/)?drive\/v3/, '');
    const upload = url.pathname.startsWith('/upload/');
    const parts = route.split('/').filter(Boolean).map(decodeURIComponent);
    const file = parts[1] ? this.files.get(parts[1]) : undefined;
    if (parts[1] && !file) return error(404, `File not found: ${parts[1]}.`);

    if (request.method === 'GET' && parts.length === 1) {
      const found = [...this.files.values()].filter(
        (item) => item.id !== 'root' && matches(item, query.q ?? ''),
      );
      const size = Number(query.pageSize ?? 100);
      const start = Number(query.pageToken ?? 0);
      const page = found.slice(start, start + size);
      return json(200, {
        files: page.map((item) => this.#resource(item)),
        ...(start + size < found.length ? { nextPageToken: String(start + size) } : {}),
      });
    }
    if (request.method === 'POST' && parts.length === 1) {
      const { metadata, content } = upload
        ? parseUpload(request, body, query)
        : { metadata: JSON.parse(body.toString() || '{}'), content: null };
      const created = this.#file({
        name: metadata.name ?? 'Untitled',
        mimeType: metadata.mimeType ?? (content ? 'text/plain' : 'application/octet-stream'),
        parents: metadata.parents ?? ['root'],
        appProperties: metadata.appProperties ?? {},
      });
      if (content) this.#addRevision(created, content);
      this.files.set(created.id, created);
      return json(200, this.#resource(created));
    }
    if (!file) return error(404, 'Not found');
    if (request.method === 'GET' && parts.length === 2) {
      if (query.alt !== 'media') return json(200, this.#resource(file));
      if (file.mimeType.startsWith('application/vnd.google-apps.'))
        return error(
          403,
          'Only files with binary content can be downloaded. Use Export with Docs Editors files.',
        );
      return media(file.revisions.at(-1)?.content ?? Buffer.alloc(0));
    }
    if (request.method === 'GET' && parts[2] === 'export') {
      const allowed =
        file.mimeType === DOC ? 'text/markdown' : file.mimeType === SHEET ? 'text/csv' : 'text/plain';
      if (query.mimeType !== allowed) return error(400, `Export to ${query.mimeType} is not supported.`);
      return media(file.revisions.at(-1)?.content ?? Buffer.alloc(0));
    }
    if (request.method === 'PATCH' && parts.length === 2) {
      const { metadata, content } = upload
        ? parseUpload(request, body, query)
        : { metadata: JSON.parse(body.toString() || '{}'), content: null };
      if (metadata.name) file.name = metadata.name;
      if (metadata.trashed !== undefined) file.trashed = metadata.trashed;
      if (metadata.appProperties) {
        for (const [key, value] of Object.entries(metadata.appProperties as Record<string, string | null>)) {
          if (value === null) delete file.appProperties[key];
          else file.appProperties[key] = value;
        }
      }
      if (query.removeParents)
        file.parents = file.parents.filter((parent) => !query.removeParents!.split(',').includes(parent));
      if (query.addParents) file.parents.push(...query.addParents.split(','));
      if (content) this.#addRevision(file, content);
      else file.modifiedTime = this.#tick();
      return json(200, this.#resource(file));
    }
    if (request.method === 'POST' && parts[2] === 'copy') {
      const metadata = JSON.parse(body.toString() || '{}');
      const copy = this.#file({
        name: metadata.name ?? `Copy of ${file.name}`,
        mimeType: file.mimeType,
        parents: metadata.parents ?? file.parents,
        appProperties: metadata.appProperties ?? {},
      });
      this.#addRevision(copy, file.revisions.at(-1)?.content ?? Buffer.alloc(0));
      this.files.set(copy.id, copy);
      return json(200, this.#resource(copy));
    }
    if (parts[2] === 'revisions') {
      if (request.method === 'GET' && parts.length === 3)
        return json(200, {
          revisions: file.revisions.map((revision) => ({
            id: revision.id,
            modifiedTime: revision.modifiedTime,
            size: String(revision.content.length),
            keepForever: revision.keepForever,
          })),
        });
      const revision = file.revisions.find((item) => item.id === parts[3]);
      if (!revision) return error(404, `Revision not found: ${parts[3]}`);
      if (request.method === 'GET') return media(revision.content);
      if (request.method === 'PATCH') {
        if (file.mimeType.startsWith('application/vnd.google-apps.'))
          return error(400, 'keepForever applies to binary files only');
        revision.keepForever = JSON.parse(body.toString() || '{}').keepForever === true;
        return json(200, { id: revision.id, keepForever: revision.keepForever });
      }
    }
    return error(404, `No route ${request.method} ${url.pathname}`);
  }
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

/** `uploadType=multipart` (JSON metadata + content, multipart/related) or `uploadType=media`. */
function parseUpload(request: IncomingMessage, body: Buffer, query: Record<string, string>) {
  if (query.uploadType !== 'multipart') return { metadata: {}, content: body };
  const boundary = /boundary=([^;]+)/.exec(request.headers['content-type'] ?? '')?.[1];
  if (!boundary) throw new Error('multipart upload without a boundary');
  const delimiter = Buffer.from(`--${boundary}`);
  const sections: Buffer[] = [];
  let start = body.indexOf(delimiter);
  while (start >= 0) {
    const next = body.indexOf(delimiter, start + delimiter.length);
    if (next < 0) break;
    sections.push(body.subarray(start + delimiter.length, next));
    start = next;
  }
  const payload = (section: Buffer) => {
    const headerEnd = section.indexOf('\r\n\r\n');
    let content = section.subarray(headerEnd + 4);
    if (content.subarray(-2).toString() === '\r\n') content = content.subarray(0, -2);
    return content;
  };
  return { metadata: JSON.parse(payload(sections[0]!).toString()), content: payload(sections[1]!) };
}

/** The subset of Drive's query language Steward uses: `'<id>' in parents`, `trashed = …`, `name = '…'`. */
function matches(file: FakeDriveFile, q: string): boolean {
  for (const clause of q.split(/\s+and\s+/).filter(Boolean)) {
    const parent = /^'(.+)' in parents$/.exec(clause.trim());
    if (parent) {
      if (!file.parents.includes(parent[1]!.replace(/\\'/g, "'"))) return false;
      continue;
    }
    const trashed = /^trashed\s*=\s*(true|false)$/.exec(clause.trim());
    if (trashed) {
      if (file.trashed !== (trashed[1] === 'true')) return false;
      continue;
    }
    const name = /^name\s*=\s*'(.*)'$/.exec(clause.trim());
    if (name) {
      if (file.name !== name[1]!.replace(/\\'/g, "'")) return false;
      continue;
    }
    throw new Error(`fake Drive cannot evaluate q clause: ${clause}`);
  }
  return true;
}

/** An auth client holding a fixed access token, as a connected Google account does. */
export function tokenAuth(token: string): OAuth2Client {
  const auth = new OAuth2Client();
  auth.setCredentials({ access_token: token, expiry_date: Date.now() + 3_600_000 });
  return auth;
}
