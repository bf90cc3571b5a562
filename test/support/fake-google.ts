import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import ICAL from 'ical.js';
import addressparser from 'nodemailer/lib/addressparser/index.js';

/*
 * Gmail v1 and Google Calendar v3 over real HTTP, for googleapis clients whose rootUrl is this
 * server (GOOGLE_API_URL), with Google's token endpoint at `/token`. Every API call needs the
 * bearer token the endpoint hands out. `failNext` makes the next API calls answer an error
 * status, or `garbage` (an HTML page with status 200).
 */

type GmailMessage = {
  id: string;
  threadId: string;
  labelIds: Set<string>;
  raw: Buffer;
  internalDate: number;
};

type GoogleEvent = {
  id: string;
  status: 'confirmed' | 'cancelled';
  summary?: string;
  description?: string;
  location?: string;
  start: { dateTime?: string; date?: string; timeZone?: string };
  end: { dateTime?: string; date?: string; timeZone?: string };
  attendees?: Array<{ email: string }>;
  recurrence?: string[];
};

const SYSTEM_LABELS = ['INBOX', 'UNREAD', 'STARRED', 'IMPORTANT', 'SENT', 'DRAFT', 'SPAM', 'TRASH'];

export class FakeGoogle {
  readonly token: string;
  readonly messages = new Map<string, GmailMessage>();
  readonly drafts: Array<{ id: string; raw: Buffer }> = [];
  /** What `messages.send` received, recipients read from the To and Cc headers. */
  readonly sent: Array<{ to: string[]; raw: string; threadId: string | null }> = [];
  readonly labels = new Map<string, string>();
  readonly events = new Map<string, GoogleEvent>();
  /** Every API request (method and path), token requests excluded. */
  readonly requests: Array<{ method: string; path: string; query: Record<string, string> }> = [];
  readonly tokenGrants: string[] = [];
  url = '';
  /** The token endpoint refuses every grant, as after the user revoked access. */
  revoked = false;
  #server: Server | null = null;
  #sequence = 0;
  #failures: Array<number | 'garbage'> = [];

  constructor(options: { token?: string } = {}) {
    this.token = options.token ?? 'fake-google-access-token';
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
    if (!this.#server) return;
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server!.close(() => resolve()));
  }

  /** The next `count` API calls answer `failure`. */
  failNext(failure: number | 'garbage', count = 1): void {
    for (let i = 0; i < count; i++) this.#failures.push(failure);
  }

  /** A message arriving in the inbox (unread unless said otherwise). */
  deliver(raw: string, options: { unread?: boolean; date?: Date } = {}): string {
    const id = `m${(++this.#sequence).toString(16).padStart(6, '0')}`;
    const labelIds = new Set(['INBOX']);
    if (options.unread !== false) labelIds.add('UNREAD');
    this.messages.set(id, {
      id,
      threadId: `t${id}`,
      labelIds,
      raw: Buffer.from(raw.replace(/\r?\n/g, '\r\n')),
      internalDate: (
        options.date ?? new Date(Date.parse('2026-01-01T00:00:00Z') + this.#sequence * 1000)
      ).getTime(),
    });
    return id;
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<unknown> {
    const url = new URL(request.url ?? '/', 'http://fake');
    const body = await readBody(request);
    const json = (status: number, value: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(value === undefined ? '' : JSON.stringify(value));
      return true;
    };
    const error = (status: number, message: string) =>
      json(status, { error: { code: status, message, errors: [{ message, reason: 'fake' }] } });
    if (request.method === 'POST' && url.pathname === '/token') {
      this.tokenGrants.push(new URLSearchParams(body).get('grant_type') ?? '');
      if (this.revoked)
        return json(400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
      return json(200, { access_token: this.token, token_type: 'Bearer', expires_in: 3600 });
    }
    this.requests.push({
      method: request.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
    });
    if (request.headers.authorization !== `Bearer ${this.token}`)
      return error(401, 'Request had invalid authentication credentials.');
    const failure = this.#failures.shift();
    if (failure === 'garbage') {
      response.writeHead(200, { 'content-type': 'text/html' });
      return void response.end('<html><body>Service temporarily unavailable</body></html>');
    }
    if (failure)
      return json(failure, {
        error: { code: failure, message: `simulated ${failure}` },
        ...(failure === 429 ? {} : {}),
      });
    const input = body ? (JSON.parse(body) as Record<string, unknown>) : {};
    const gmail = /^\/gmail\/v1\/users\/me\/(.+)$/.exec(url.pathname);
    if (gmail)
      return this.#gmail(request.method ?? 'GET', gmail[1]!.split('/'), url.searchParams, input, json, error);
    const calendar = /^\/calendar\/v3\/calendars\/primary\/events(?:\/([^/]+))?$/.exec(url.pathname);
    if (calendar)
      return this.#calendar(
        request.method ?? 'GET',
        calendar[1] && decodeURIComponent(calendar[1]),
        url.searchParams,
        input,
        json,
        error,
      );
    return error(404, `No route ${request.method} ${url.pathname}`);
  }

  // ----------------------------------------------------------------------------------------
  // Gmail

  #gmail(
    method: string,
    parts: string[],
    query: URLSearchParams,
    input: Record<string, unknown>,
    json: (status: number, value: unknown) => boolean,
    error: (status: number, message: string) => boolean,
  ): boolean {
    const [collection, id, action] = parts;
    if (collection === 'labels') {
      if (method === 'GET')
        return json(200, {
          labels: [
            ...SYSTEM_LABELS.map((label) => ({ id: label, name: label, type: 'system' })),
            ...[...this.labels].map(([labelId, name]) => ({ id: labelId, name, type: 'user' })),
          ],
        });
      if (method === 'POST') {
        const name = String(input.name ?? '');
        if ([...this.labels.values()].some((existing) => existing.toLowerCase() === name.toLowerCase()))
          return error(409, 'Label name exists or conflicts');
        const labelId = `Label_${++this.#sequence}`;
        this.labels.set(labelId, name);
        return json(200, { id: labelId, name, type: 'user' });
      }
    }
    if (collection === 'drafts' && method === 'POST') {
      const raw = Buffer.from(String((input.message as { raw?: string })?.raw ?? ''), 'base64url');
      const draftId = `r${++this.#sequence}`;
      this.drafts.push({ id: draftId, raw });
      return json(200, { id: draftId, message: { id: `m${this.#sequence}`, labelIds: ['DRAFT'] } });
    }
    if (collection !== 'messages') return error(404, `No Gmail route ${parts.join('/')}`);
    if (method === 'POST' && id === 'send') {
      const raw = Buffer.from(String(input.raw ?? ''), 'base64url');
      if (raw.length === 0) return error(400, "'raw' RFC822 payload message string required");
      const headers = headersOf(raw);
      const to = [headers.get('to'), headers.get('cc')]
        .filter((value): value is string => Boolean(value))
        .flatMap((value) => addressparser(value, { flatten: true }).map((entry) => entry.address));
      const threadId = typeof input.threadId === 'string' ? input.threadId : null;
      this.sent.push({ to, raw: raw.toString('utf8'), threadId });
      const sentId = `s${++this.#sequence}`;
      this.messages.set(sentId, {
        id: sentId,
        threadId: threadId ?? `t${sentId}`,
        labelIds: new Set(['SENT']),
        raw,
        internalDate: Date.now(),
      });
      return json(200, { id: sentId, threadId: threadId ?? `t${sentId}`, labelIds: ['SENT'] });
    }
    if (method === 'GET' && !id) {
      const limit = Number(query.get('maxResults') ?? 100);
      const found = [...this.messages.values()]
        .filter((message) => matchesGmailQuery(message, query.get('q') ?? '', this.labels))
        .sort((a, b) => b.internalDate - a.internalDate)
        .slice(0, limit);
      return json(200, {
        messages: found.map((message) => ({ id: message.id, threadId: message.threadId })),
        resultSizeEstimate: found.length,
      });
    }
    const message = id ? this.messages.get(id) : undefined;
    if (!message) return error(404, 'Requested entity was not found.');
    if (method === 'GET' && !action) {
      const resource = {
        id: message.id,
        threadId: message.threadId,
        labelIds: [...message.labelIds],
        internalDate: String(message.internalDate),
        snippet: '',
      };
      if (query.get('format') === 'raw')
        return json(200, { ...resource, raw: message.raw.toString('base64url') });
      const wanted = query.getAll('metadataHeaders').map((name) => name.toLowerCase());
      const headers = [...headersOf(message.raw)]
        .filter(([name]) => wanted.length === 0 || wanted.includes(name))
        .map(([name, value]) => ({ name: name[0]!.toUpperCase() + name.slice(1), value }));
      return json(200, { ...resource, payload: { headers } });
    }
    if (method === 'POST' && action === 'modify') {
      for (const labelId of (input.removeLabelIds as string[] | undefined) ?? [])
        message.labelIds.delete(labelId);
      for (const labelId of (input.addLabelIds as string[] | undefined) ?? []) {
        if (!SYSTEM_LABELS.includes(labelId) && !this.labels.has(labelId))
          return error(400, `Invalid label: ${labelId}`);
        message.labelIds.add(labelId);
      }
      return json(200, { id: message.id, threadId: message.threadId, labelIds: [...message.labelIds] });
    }
    return error(404, `No Gmail route ${method} ${parts.join('/')}`);
  }

  // ----------------------------------------------------------------------------------------
  // Calendar

  #calendar(
    method: string,
    id: string | undefined,
    query: URLSearchParams,
    input: Record<string, unknown>,
    json: (status: number, value: unknown) => boolean,
    error: (status: number, message: string) => boolean,
  ): boolean {
    if (!id && method === 'GET') {
      if (query.get('singleEvents') !== 'true') return error(400, 'the fake expands series only');
      const from = Date.parse(query.get('timeMin') ?? '');
      const to = Date.parse(query.get('timeMax') ?? '');
      if (Number.isNaN(from) || Number.isNaN(to)) return error(400, 'timeMin and timeMax are required');
      const items = [...this.events.values()]
        .filter((event) => event.status !== 'cancelled')
        .flatMap((event) => expand(event, from, to));
      items.sort((a, b) => startOf(a) - startOf(b));
      return json(200, { kind: 'calendar#events', items });
    }
    if (!id && method === 'POST') {
      const event = { ...(input as Partial<GoogleEvent>) };
      if (!event.start || !event.end) return error(400, 'Missing time: start and end are required.');
      const created: GoogleEvent = {
        ...event,
        start: event.start,
        end: event.end,
        id: `ev${(++this.#sequence).toString(36)}x${Math.random().toString(36).slice(2, 8)}`,
        status: 'confirmed',
      };
      this.events.set(created.id, created);
      return json(200, created);
    }
    const instance = id ? /^(.+)_(\d{8}T\d{6}Z)$/.exec(id) : null;
    const event = id
      ? (this.events.get(id) ?? (instance ? this.events.get(instance[1]!) : undefined))
      : undefined;
    if (!event) return error(404, 'Not Found');
    if (instance && !this.events.has(id!)) {
      const occurrence = expand(event, -Infinity, Infinity).find((item) => item.id === id);
      if (!occurrence || method !== 'GET') return error(404, 'Not Found');
      return json(200, occurrence);
    }
    if (method === 'GET') return json(200, event);
    if (event.status === 'cancelled') return error(410, 'Resource has been deleted');
    if (method === 'PATCH') {
      Object.assign(event, input);
      return json(200, event);
    }
    if (method === 'DELETE') {
      event.status = 'cancelled';
      return json(204, undefined);
    }
    return error(405, 'Method not allowed');
  }
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** The top-level headers of a raw message, lower-cased names, unfolded. */
function headersOf(raw: Buffer): Map<string, string> {
  const text = raw.toString('utf8');
  const end = text.search(/\r?\n\r?\n/);
  const head = (end < 0 ? text : text.slice(0, end)).replace(/\r?\n[ \t]+/g, ' ');
  const headers = new Map<string, string>();
  for (const line of head.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) {
      const name = line.slice(0, colon).trim().toLowerCase();
      if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
    }
  }
  return headers;
}

/** The part of Gmail's search language Steward writes: in:, label:, from:, to:, subject:(), is:unread, after:, before:, words. */
function matchesGmailQuery(message: GmailMessage, q: string, labels: Map<string, string>): boolean {
  const headers = headersOf(message.raw);
  const text = message.raw.toString('utf8').toLowerCase();
  const labelNames = [...message.labelIds].map((labelId) => (labels.get(labelId) ?? labelId).toLowerCase());
  for (const match of q.matchAll(/(\w+):(\([^)]*\)|"[^"]*"|\S+)|"([^"]*)"|(\S+)/g)) {
    const [, operator, rawValue, phrase, word] = match;
    const value = (rawValue ?? '').replace(/^[("]|[)"]$/g, '').toLowerCase();
    if (operator === 'in' || operator === 'label') {
      if (!labelNames.some((name) => name.replaceAll(' ', '-') === value)) return false;
    } else if (operator === 'from' || operator === 'to') {
      if (!(headers.get(operator) ?? '').toLowerCase().includes(value)) return false;
    } else if (operator === 'subject') {
      const subject = (headers.get('subject') ?? '').toLowerCase();
      if (
        !value
          .split(/\s+/)
          .filter(Boolean)
          .every((part) => subject.includes(part))
      )
        return false;
    } else if (operator === 'is') {
      if (value === 'unread' && !message.labelIds.has('UNREAD')) return false;
    } else if (operator === 'after' || operator === 'before') {
      const seconds = Number(value) * 1000;
      if (operator === 'after' ? message.internalDate < seconds : message.internalDate >= seconds)
        return false;
    } else if (operator) {
      throw new Error(`fake Gmail cannot evaluate ${operator}:`);
    } else if (!text.includes((phrase ?? word ?? '').toLowerCase())) {
      return false;
    }
  }
  return true;
}

function startOf(event: GoogleEvent): number {
  return Date.parse(event.start.dateTime ?? `${event.start.date}T00:00:00Z`);
}

function endOf(event: GoogleEvent): number {
  return Date.parse(event.end.dateTime ?? `${event.end.date}T00:00:00Z`);
}

/** The event, or its occurrences (as Google's singleEvents=true does), overlapping [from, to). */
function expand(event: GoogleEvent, from: number, to: number): GoogleEvent[] {
  const rule = (event.recurrence ?? []).find((line) => line.startsWith('RRULE:'));
  if (!rule) return endOf(event) > from && startOf(event) < to ? [event] : [];
  const zone = event.start.timeZone ?? 'UTC';
  const duration = endOf(event) - startOf(event);
  const wall = wallClock(new Date(startOf(event)), zone);
  const iterator = ICAL.Recur.fromString(rule.slice('RRULE:'.length)).iterator(
    ICAL.Time.fromData({ ...wall, second: 0, isDate: false }),
  );
  const occurrences: GoogleEvent[] = [];
  for (let index = 0; index < 1000; index++) {
    const next = iterator.next();
    if (!next) break;
    const start = zonedInstant(next, zone);
    if (start >= to) break;
    if (start + duration <= from) continue;
    const stamp = new Date(start)
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d{3}/, '');
    const { recurrence: _series, ...rest } = event;
    occurrences.push({
      ...rest,
      id: `${event.id}_${stamp}`,
      start: { dateTime: new Date(start).toISOString(), timeZone: zone },
      end: { dateTime: new Date(start + duration).toISOString(), timeZone: zone },
      recurringEventId: event.id,
    } as GoogleEvent);
  }
  return occurrences;
}

function wallClock(instant: Date, zone: string) {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
  }).formatToParts(instant);
  const part = (type: string) => Number(parts.find((item) => item.type === type)?.value);
  return {
    year: part('year'),
    month: part('month'),
    day: part('day'),
    hour: part('hour'),
    minute: part('minute'),
  };
}

/** The instant at which the wall clock in `zone` reads `time`. */
function zonedInstant(
  time: { year: number; month: number; day: number; hour: number; minute: number },
  zone: string,
): number {
  const asUtc = Date.UTC(time.year, time.month - 1, time.day, time.hour, time.minute);
  let guess = asUtc;
  for (let step = 0; step < 2; step++) {
    const seen = wallClock(new Date(guess), zone);
    const seenUtc = Date.UTC(seen.year, seen.month - 1, seen.day, seen.hour, seen.minute);
    guess += asUtc - seenUtc;
  }
  return guess;
}
