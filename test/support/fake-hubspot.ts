import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

type HubspotRecord = { id: string; properties: Record<string, string | null>; notes: string[] };

/**
 * A fake HubSpot CRM v3 REST API on 127.0.0.1 (contacts, deals, notes), checking the bearer
 * token. `failWith` makes every call answer a status (429, 503) or `garbage` (HTML).
 */
export async function startFakeHubspot(options: { token: string }) {
  const contacts = new Map<string, HubspotRecord>();
  const deals = new Map<string, HubspotRecord>();
  const notes = new Map<string, HubspotRecord>();
  let nextId = 100;
  const state = { failWith: null as number | 'garbage' | null, requests: 0 };
  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    state.requests++;
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (state.failWith === 'garbage') {
      response.writeHead(200, { 'content-type': 'application/json' });
      return response.end('<html>maintenance</html>');
    }
    if (state.failWith) return json(state.failWith, { status: 'error', message: 'fake failure' });
    if (request.headers.authorization !== `Bearer ${options.token}`)
      return json(401, { status: 'error', message: 'Authentication credentials not found.' });
    let body: Record<string, unknown> = {};
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (chunks.length) body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const url = new URL(request.url ?? '/', 'http://x');
    const match = /^\/crm\/v3\/objects\/(contacts|deals|notes)(?:\/([^/]+))?(?:\/([^/]+))?$/.exec(
      url.pathname,
    );
    if (!match) return json(404, { message: `no route ${url.pathname}` });
    const [, kind, idOrAction, sub] = match;
    const store = kind === 'contacts' ? contacts : kind === 'deals' ? deals : notes;
    const out = (record: HubspotRecord) => ({
      id: record.id,
      properties: record.properties,
      createdAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
      archived: false,
      ...(kind === 'contacts' && url.searchParams.get('associations')?.includes('notes')
        ? {
            associations: { notes: { results: record.notes.map((id) => ({ id, type: 'contact_to_note' })) } },
          }
        : {}),
    });
    if (request.method === 'POST' && idOrAction === 'search') {
      const query = String(body.query ?? '').toLowerCase();
      const filters = (
        (body.filterGroups as Array<{ filters: Array<{ propertyName: string; value: string }> }>) ?? []
      ).flatMap(
        (group) => group.filters as Array<{ propertyName: string; value: string; operator?: string }>,
      );
      const results = [...store.values()].filter(
        (record) =>
          (!query ||
            Object.values(record.properties).some((value) => value?.toLowerCase().includes(query))) &&
          filters.every((filter) => {
            const value = (record.properties[filter.propertyName] ?? '').toLowerCase();
            const wanted = filter.value.toLowerCase();
            return filter.operator === 'EQ' ? value === wanted : value.includes(wanted);
          }),
      );
      return json(200, {
        total: results.length,
        results: results.slice(0, Number(body.limit ?? 10)).map(out),
      });
    }
    if (request.method === 'POST' && idOrAction === 'batch' && sub === 'read') {
      const inputs = (body.inputs as Array<{ id: string }>) ?? [];
      return json(200, {
        status: 'COMPLETE',
        results: inputs.flatMap((input) => (store.has(input.id) ? [out(store.get(input.id)!)] : [])),
        startedAt: new Date().toISOString(),
        completedAt: new Date().toISOString(),
      });
    }
    if (request.method === 'POST' && !idOrAction) {
      const record: HubspotRecord = {
        id: String(nextId++),
        properties: (body.properties as Record<string, string>) ?? {},
        notes: [],
      };
      store.set(record.id, record);
      for (const association of (body.associations as Array<{ to: { id: string } }>) ?? []) {
        const target = contacts.get(association.to.id) ?? deals.get(association.to.id);
        target?.notes.push(record.id);
      }
      return json(201, out(record));
    }
    const record = idOrAction ? store.get(idOrAction) : undefined;
    if (!record) return json(404, { status: 'error', message: 'Object not found' });
    if (request.method === 'GET') return json(200, out(record));
    if (request.method === 'PATCH') {
      Object.assign(record.properties, body.properties as Record<string, string>);
      return json(200, out(record));
    }
    return json(405, { message: 'method not allowed' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    contacts,
    deals,
    notes,
    state,
    addDeal(properties: Record<string, string>) {
      const record = { id: String(nextId++), properties, notes: [] };
      deals.set(record.id, record);
      return record.id;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
