import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import ICAL from 'ical.js';

/*
 * A CalDAV server (RFC 4791) over real HTTP with Basic auth, enough for tsdav: discovery
 * (current-user-principal, calendar-home-set), PROPFIND of the home's calendars, REPORT
 * calendar-query (time-range on VEVENT) and calendar-multiget, and GET / PUT / DELETE of
 * `.ics` objects with ETags (If-Match / If-None-Match honoured). One event calendar at
 * `/dav/calendars/<user>/personal/`, beside a tasks-only (VTODO) collection.
 */

type StoredObject = { data: string; etag: number };

export class FakeCaldav {
  readonly objects = new Map<string, StoredObject>();
  readonly requests: Array<{ method: string; path: string }> = [];
  url = '';
  /** Every request answers this status while set (503, 429). */
  failWith: number | null = null;
  readonly #user: string;
  readonly #password: string;
  #server: Server | null = null;
  #etag = 0;

  constructor(options: { user: string; password: string }) {
    this.#user = options.user;
    this.#password = options.password;
  }

  get calendarPath(): string {
    return `/dav/calendars/${this.#user}/personal/`;
  }

  async start(): Promise<this> {
    this.#server = createServer((request, response) => {
      void this.#handle(request, response).catch((error: unknown) => {
        response.writeHead(500, { 'content-type': 'text/plain' });
        response.end(String(error));
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    const address = this.#server.address();
    if (typeof address !== 'object' || !address) throw new Error('no address');
    this.url = `http://127.0.0.1:${address.port}/dav/`;
    return this;
  }

  async stop(): Promise<void> {
    if (!this.#server) return;
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server!.close(() => resolve()));
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://fake');
    const method = request.method ?? 'GET';
    const path = decodeURIComponent(url.pathname);
    this.requests.push({ method, path });
    const body = await readBody(request);
    const send = (status: number, text = '', headers: Record<string, string> = {}) => {
      response.writeHead(status, headers);
      response.end(text);
    };
    const multistatus = (responses: string[]) =>
      send(
        207,
        `<?xml version="1.0" encoding="utf-8"?>\n<d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:cs="http://calendarserver.org/ns/">${responses.join('')}</d:multistatus>`,
        { 'content-type': 'application/xml; charset=utf-8' },
      );
    if (path.startsWith('/.well-known/')) return send(404);
    const expected = `Basic ${Buffer.from(`${this.#user}:${this.#password}`).toString('base64')}`;
    if (request.headers.authorization !== expected)
      return send(401, 'Unauthorized', { 'www-authenticate': 'Basic realm="fake"' });
    if (this.failWith) return send(this.failWith, 'simulated failure', { 'retry-after': '30' });

    const principal = `/dav/principals/${this.#user}/`;
    const home = `/dav/calendars/${this.#user}/`;
    const tasks = `${home}tasks/`;
    if (method === 'PROPFIND') {
      const depth = request.headers.depth ?? '0';
      if (path === '/dav/' || path === principal) {
        return multistatus([
          entry(
            path,
            `<d:current-user-principal><d:href>${principal}</d:href></d:current-user-principal><c:calendar-home-set><d:href>${home}</d:href></c:calendar-home-set><d:resourcetype><d:collection/></d:resourcetype>`,
          ),
        ]);
      }
      const collection = (href: string, component: string, name: string) =>
        entry(
          href,
          `<d:resourcetype><d:collection/><c:calendar/></d:resourcetype><d:displayname>${name}</d:displayname><c:supported-calendar-component-set><c:comp name="${component}"/></c:supported-calendar-component-set><cs:getctag>${this.#etag}</cs:getctag><d:supported-report-set><d:supported-report><d:report><c:calendar-query/></d:report></d:supported-report><d:supported-report><d:report><c:calendar-multiget/></d:report></d:supported-report></d:supported-report-set>`,
        );
      if (path === home) {
        const children =
          depth === '0'
            ? []
            : [collection(tasks, 'VTODO', 'Tasks'), collection(this.calendarPath, 'VEVENT', 'Personal')];
        return multistatus([entry(home, '<d:resourcetype><d:collection/></d:resourcetype>'), ...children]);
      }
      if (path === this.calendarPath)
        return multistatus([collection(this.calendarPath, 'VEVENT', 'Personal')]);
      if (path === tasks) return multistatus([collection(tasks, 'VTODO', 'Tasks')]);
      return send(404);
    }
    if (method === 'REPORT' && (path === this.calendarPath || path === tasks)) {
      if (path === tasks) return multistatus([]);
      if (body.includes('calendar-multiget')) {
        const hrefs = [...body.matchAll(/<(?:\w+:)?href>([^<]+)<\/(?:\w+:)?href>/g)].map((match) =>
          decodeURIComponent(match[1]!.trim()),
        );
        return multistatus(
          hrefs.map((href) => {
            const object = this.objects.get(href);
            return object
              ? entry(
                  href,
                  `<d:getetag>"${object.etag}"</d:getetag><c:calendar-data>${escapeXml(object.data)}</c:calendar-data>`,
                )
              : `<d:response><d:href>${href}</d:href><d:status>HTTP/1.1 404 Not Found</d:status></d:response>`;
          }),
        );
      }
      const range = /time-range[^>]*start="(\d{8}T\d{6}Z)"[^>]*end="(\d{8}T\d{6}Z)"/.exec(body);
      const from = range ? parseStamp(range[1]!) : -Infinity;
      const to = range ? parseStamp(range[2]!) : Infinity;
      const hits = [...this.objects].filter(
        ([href, object]) => href.startsWith(path) && overlaps(object.data, from, to),
      );
      return multistatus(
        hits.map(([href, object]) => entry(href, `<d:getetag>"${object.etag}"</d:getetag>`)),
      );
    }
    if (!path.startsWith(this.calendarPath) || !path.endsWith('.ics')) return send(404);
    const current = this.objects.get(path);
    if (method === 'GET') {
      if (!current) return send(404, 'Not Found');
      return send(200, current.data, {
        'content-type': 'text/calendar; charset=utf-8',
        etag: `"${current.etag}"`,
      });
    }
    if (method === 'PUT') {
      if (request.headers['if-none-match'] === '*' && current) return send(412, 'exists');
      const ifMatch = request.headers['if-match'];
      if (ifMatch && (!current || ifMatch.replace(/"/g, '') !== String(current.etag)))
        return send(412, 'etag mismatch');
      try {
        ICAL.parse(body);
      } catch {
        return send(400, 'not iCalendar');
      }
      const etag = ++this.#etag;
      this.objects.set(path, { data: body, etag });
      return send(current ? 204 : 201, '', { etag: `"${etag}"` });
    }
    if (method === 'DELETE') {
      if (!current) return send(404, 'Not Found');
      this.objects.delete(path);
      return send(204);
    }
    return send(405);
  }
}

function entry(href: string, props: string): string {
  return `<d:response><d:href>${href}</d:href><d:propstat><d:prop>${props}</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>`;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function parseStamp(stamp: string): number {
  const [, y, mo, d, h, mi, s] = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(stamp)!;
  return Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
}

/** Whether the object's event overlaps [from, to); a recurring one is always returned (as servers that do not expand may). */
function overlaps(data: string, from: number, to: number): boolean {
  const vevent = new ICAL.Component(ICAL.parse(data)).getFirstSubcomponent('vevent');
  if (!vevent) return false;
  if (vevent.getFirstPropertyValue('rrule')) return true;
  const start = (vevent.getFirstPropertyValue('dtstart') as InstanceType<typeof ICAL.Time>)
    .toJSDate()
    .getTime();
  const endValue = vevent.getFirstPropertyValue('dtend') as InstanceType<typeof ICAL.Time> | null;
  const end = endValue ? endValue.toJSDate().getTime() : start + 3_600_000;
  return end > from && start < to;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}
