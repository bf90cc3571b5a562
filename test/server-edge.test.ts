import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.ts';
import { createLogger, silentLogger } from '../src/logging/index.ts';
import { mcpHttpRoutes } from '../src/mcp/index.ts';
import {
  type AuthEnv,
  assertSafeBinding,
  chatRoutes,
  createServerApp,
  isLoopbackHost,
  listen,
  runRoutes,
  tokenRoutes,
  voiceRoutes,
} from '../src/server/index.ts';
import { backends } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { startTestSteward, type TestSteward } from './support/steward.ts';

/*
 * The HTTP edge (issue 9, items 5, 7, 8): body and message limits, JSON only, Host and Origin
 * checks against DNS rebinding and cross-site calls, text that cannot be stored, and per-user
 * tokens that act only as their user.
 */

const OWNER_TOKEN = 'owner-token-0123456789';

let fake: FakeLlm;
let steward: TestSteward;
let app: Hono;
let openApp: Hono;
let build: (env: Record<string, string>) => Hono;
beforeAll(async () => {
  fake = await startFakeLlm();
  fake.respondWith(() => ({ text: 'ok' }));
  steward = await startTestSteward(backends()[0]!, fake);
  build = (env: Record<string, string>) => {
    const config = loadConfig({
      env: { ...env, STEWARD_CONFIG: steward.config.configPath! },
      cwd: process.cwd(),
    });
    const api = new Hono<AuthEnv>();
    api.route('/', runRoutes(steward.runtime));
    api.route('/', chatRoutes({ engine: steward.runtime.engine, database: steward.db.database }));
    api.route('/', tokenRoutes(steward.db.database));
    return createServerApp({
      database: steward.db.database,
      logger: silentLogger(),
      config: () => config,
      api,
      metrics: steward.runtime.observability.metrics ?? undefined,
      mcp: mcpHttpRoutes({
        database: steward.db.database,
        executor: steward.runtime.executor,
        skills: () => steward.runtime.skills.snapshot(),
        config: () => config,
      }),
    });
  };
  app = build({ STEWARD_API_TOKEN: OWNER_TOKEN });
  openApp = build({});
});
afterAll(async () => {
  await steward?.close();
  await fake?.close();
});

const post = (target: Hono, path: string, body: unknown, headers: Record<string, string> = {}) =>
  target.request(`http://localhost${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${OWNER_TOKEN}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('limits and bad input', () => {
  it('refuses a body over the limit with 413 naming the limit', async () => {
    const response = await post(app, '/api/chat', { text: 'x'.repeat(1_100_000) });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { message: string }).message).toContain('1048576 bytes');
  });

  it('answers an overlong message with 400 naming limits.max_message_chars', async () => {
    const response = await post(app, '/api/chat', { text: 'word '.repeat(9_000) });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toContain('limits.max_message_chars');
  });

  it('refuses text/plain and form bodies (a web page cannot post them to the API)', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const response = await post(app, '/api/run', '{"command": "get_skill"}', { 'content-type': type });
      expect(response.status).toBe(415);
    }
  });

  it('answers a body that is not valid JSON with 400 saying so, on chat and run', async () => {
    for (const path of ['/api/chat', '/api/run']) {
      for (const body of ['{"text": "hi",}', '{', 'text=hi']) {
        const response = await post(app, path, body);
        expect(response.status).toBe(400);
        const answer = (await response.json()) as { error: string; message: string };
        expect(answer.error).toBe('bad_request');
        expect(answer.message).toMatch(/^The request body is not valid JSON/);
        expect(answer.message).not.toContain('received null');
      }
    }
  });

  it('answers NUL bytes and lone surrogates with 400 and the reason, on chat and run', async () => {
    const nul = await post(app, '/api/chat', { text: 'buy\u0000milk' });
    expect(nul.status).toBe(400);
    expect(((await nul.json()) as { message: string }).message).toContain('NUL');
    const surrogate = await post(app, '/api/run', '{"command": "tasks.create --title \\"a\\ud800b\\""}');
    expect(surrogate.status).toBe(400);
    expect(((await surrogate.json()) as { message: string }).message).toContain('unpaired UTF-16 surrogate');
  });

  it('records a model-written command with a NUL byte as an error result, never a database error', async () => {
    const outcome = await steward.runtime.executor.execute({
      command: 'tasks.create --title "a\u0000b"',
      caller: { kind: 'orchestrator', allowMutating: true },
      user: { id: 'local', timezone: 'UTC' },
      confirmed: true,
    });
    expect(outcome.status).toBe('error');
    expect(outcome.content).toContain('NUL character');
    const [row] = await steward.db.database.query<{ status: string; command: string }>(
      'SELECT status, command FROM skill_executions WHERE id = $1',
      [outcome.executionId],
    );
    expect(row).toEqual({ status: 'error', command: 'tasks.create --title "a\uFFFDb"' });
  });
});

describe('Host and Origin', () => {
  it('refuses a foreign Host (DNS rebinding), including names that start with 127.', async () => {
    for (const host of ['evil.example', '127.evil.example', 'localhost.evil.example']) {
      const response = await openApp.request('http://x/api/run', {
        method: 'POST',
        headers: { host, 'content-type': 'application/json' },
        body: JSON.stringify({ command: 'get_skill' }),
      });
      expect(response.status, host).toBe(403);
    }
    const local = await openApp.request('http://localhost:3000/api/run', {
      method: 'POST',
      headers: { host: 'localhost:3000', 'content-type': 'application/json' },
      body: JSON.stringify({ command: 'get_skill' }),
    });
    expect(local.status).toBe(200);
  });

  it('refuses a foreign Origin and accepts its own', async () => {
    const foreign = await post(
      openApp,
      '/api/run',
      { command: 'get_skill' },
      { origin: 'https://evil.example', authorization: '' },
    );
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { error: string }).error).toBe('forbidden_origin');
    const opaque = await post(
      openApp,
      '/api/run',
      { command: 'get_skill' },
      { origin: 'null', authorization: '' },
    );
    expect(opaque.status).toBe(403);
    const own = await post(
      openApp,
      '/api/run',
      { command: 'get_skill' },
      { origin: 'http://localhost', authorization: '' },
    );
    expect(own.status).toBe(200);
  });

  it('treats only literal loopback addresses as loopback', () => {
    expect(isLoopbackHost('127.0.0.1')).toBe(true);
    expect(isLoopbackHost('127.1.2.3')).toBe(true);
    expect(isLoopbackHost('[::1]')).toBe(true);
    expect(isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('127.evil.example')).toBe(false);
    expect(() => assertSafeBinding('127.evil.example', undefined)).toThrow('STEWARD_API_TOKEN');
  });
});

describe('per-user tokens', () => {
  it('lets a user token act only as its user, and see only its own turns', async () => {
    const alice = await post(app, '/api/tokens', { user: 'alice', name: 'phone' });
    expect(alice.status).toBe(201);
    const { token } = (await alice.json()) as { token: string };
    const asAlice = { authorization: `Bearer ${token}` };

    const impersonate = await post(app, '/api/chat', { text: 'hi', user: 'bob' }, asAlice);
    expect(impersonate.status).toBe(403);
    const own = await post(app, '/api/chat', { text: 'hi' }, asAlice);
    expect(own.status).toBe(200);
    const aliceTurn = ((await own.json()) as { turnId: string }).turnId;
    const bob = await post(app, '/api/chat', { text: 'hi', user: 'bob' });
    const bobTurn = ((await bob.json()) as { turnId: string }).turnId;

    const read = (id: string, headers: Record<string, string>) =>
      app.request(`http://localhost/api/turns/${id}`, { headers });
    expect((await read(aliceTurn, asAlice)).status).toBe(200);
    expect((await read(bobTurn, asAlice)).status).toBe(404);
    expect((await read(bobTurn, { authorization: `Bearer ${OWNER_TOKEN}` })).status).toBe(200);
    const trace = (await (await read(aliceTurn, asAlice)).json()) as { turn: { user_id: string } };
    expect(trace.turn.user_id).toBe('alice');

    // Only the owner manages tokens; a revoked token stops working.
    expect((await post(app, '/api/tokens', { user: 'alice' }, asAlice)).status).toBe(403);
    const listed = (await (
      await app.request('http://localhost/api/tokens?user=alice', {
        headers: { authorization: `Bearer ${OWNER_TOKEN}` },
      })
    ).json()) as { tokens: Array<{ id: string }> };
    expect(JSON.stringify(listed)).not.toContain(token);
    await app.request(`http://localhost/api/tokens/${listed.tokens[0]!.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${OWNER_TOKEN}` },
    });
    expect((await post(app, '/api/chat', { text: 'hi' }, asAlice)).status).toBe(401);
  });

  it('refuses a wrong token', async () => {
    expect(
      (await post(app, '/api/run', { command: 'get_skill' }, { authorization: 'Bearer nope' })).status,
    ).toBe(401);
  });
});

describe('token guessing', () => {
  const MCP_INIT = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
  };
  const mcp = (target: Hono, token: string) =>
    post(target, '/mcp', MCP_INIT, {
      authorization: `Bearer ${token}`,
      accept: 'application/json, text/event-stream',
    });
  const metrics = (target: Hono, token: string) =>
    target.request('http://localhost/metrics', { headers: { authorization: `Bearer ${token}` } });

  it('answers wrong tokens 429 with Retry-After after 20 in a minute, on /api, /mcp and /metrics alike', async () => {
    const guarded = build({ STEWARD_API_TOKEN: OWNER_TOKEN });
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let index = 0; index < 30; index++) {
      last = await post(
        guarded,
        '/api/run',
        { command: 'get_skill' },
        { authorization: `Bearer wrong-${index}` },
      );
      statuses.push(last.status);
    }
    expect(statuses).toEqual([...Array<number>(20).fill(401), ...Array<number>(10).fill(429)]);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await last!.json()) as { error: string }).error).toBe('auth_throttled');
    // One budget per address across every door that takes a token.
    expect((await mcp(guarded, 'wrong-mcp')).status).toBe(429);
    expect((await metrics(guarded, 'wrong-metrics')).status).toBe(429);
    // No token at all guesses nothing: still 401.
    expect((await post(guarded, '/api/run', { command: 'get_skill' }, { authorization: '' })).status).toBe(
      401,
    );
  });

  it('never refuses a valid token, the owner’s or a user’s, from a throttled address', async () => {
    const guarded = build({ STEWARD_API_TOKEN: OWNER_TOKEN });
    const made = await post(guarded, '/api/tokens', { user: 'carol', name: 'laptop' });
    const { token: userToken } = (await made.json()) as { token: string };
    for (let index = 0; index < 25; index++) {
      await post(guarded, '/api/run', { command: 'get_skill' }, { authorization: `Bearer wrong-${index}` });
    }
    expect(
      (await post(guarded, '/api/run', { command: 'get_skill' }, { authorization: 'Bearer x' })).status,
    ).toBe(429);
    expect((await post(guarded, '/api/run', { command: 'get_skill' })).status).toBe(200);
    expect(
      (await post(guarded, '/api/run', { command: 'get_skill' }, { authorization: `Bearer ${userToken}` }))
        .status,
    ).toBe(200);
    expect((await mcp(guarded, OWNER_TOKEN)).status).toBe(200);
    expect((await metrics(guarded, OWNER_TOKEN)).status).toBe(200);
  });
});

describe('aborted uploads', () => {
  it('logs a request its client cut off once, below error level and without a stack', async () => {
    let logs = '';
    const destination = new Writable({
      write(chunk, _encoding, done) {
        logs += String(chunk);
        done();
      },
    });
    const config = loadConfig({
      env: { STEWARD_API_TOKEN: OWNER_TOKEN, STEWARD_CONFIG: steward.config.configPath! },
      cwd: process.cwd(),
    });
    const api = new Hono<AuthEnv>();
    api.route(
      '/',
      voiceRoutes({
        engine: steward.runtime.engine,
        database: steward.runtime.database,
        voice: steward.runtime.voice,
        config: () => config,
      }),
    );
    const app = createServerApp({
      database: steward.db.database,
      logger: createLogger({ level: 'debug', destination, secrets: () => [] }),
      config: () => config,
      api,
    });
    const server = await listen(app, { host: '127.0.0.1', port: 0, apiToken: OWNER_TOKEN });
    try {
      for (const framing of ['content-length: 500000', 'transfer-encoding: chunked']) {
        const socket = connect(server.port, '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write(
          `POST /api/voice HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer ${OWNER_TOKEN}\r\n` +
            `content-type: audio/ogg\r\n${framing}\r\n\r\n`,
        );
        const part = `OggS${'a'.repeat(4000)}`;
        socket.write(framing.startsWith('transfer') ? `${part.length.toString(16)}\r\n${part}\r\n` : part);
        await new Promise((resolve) => setTimeout(resolve, 100));
        socket.destroy();
      }
      await expect.poll(() => logs.match(/request aborted by the client/g)?.length ?? 0).toBe(2);
      const lines = logs
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const aborted = lines.filter((line) => line.msg === 'request aborted by the client');
      expect(aborted.map((line) => line.level)).toEqual([30, 30]);
      expect(JSON.stringify(aborted)).not.toContain('stack');
      expect(lines.filter((line) => Number(line.level) >= 50)).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
