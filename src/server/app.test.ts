import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropStewardObjects } from '../backup/index.ts';
import { loadConfig } from '../config/index.ts';
import { type Database, openPglite } from '../db/index.ts';
import { silentLogger } from '../logging/logger.ts';
import { createServerApp } from './app.ts';

let database: Database;
beforeAll(async () => {
  // The template has every migration: emptied of Steward's objects, it has none applied.
  database = await openPglite(null);
  await database.transaction(dropStewardObjects);
});
afterAll(async () => {
  await database.close();
});

function app(env: Record<string, string> = {}) {
  const config = loadConfig({ env, cwd: process.cwd() });
  return createServerApp({ database, logger: silentLogger(), config: () => config });
}

describe('health', () => {
  it('is alive before migrations and ready only after them', async () => {
    const server = app();
    expect((await server.request('/healthz')).status).toBe(200);
    const before = await server.request('/readyz');
    expect(before.status).toBe(503);
    expect(((await before.json()) as { reason: string }).reason).toContain('pending migrations');
    const { migrate } = await import('../db/index.ts');
    await migrate(database);
    const after = await server.request('/readyz');
    expect(after.status).toBe(200);
    expect(await after.json()).toMatchObject({ status: 'ready', database: 'pglite', vector: true });
  });
});

describe('api auth', () => {
  it('requires the bearer token on /api/* when one is configured', async () => {
    const server = app({ STEWARD_API_TOKEN: 'a-very-long-api-token' });
    expect((await server.request('/api/nothing')).status).toBe(401);
    expect(
      (await server.request('/api/nothing', { headers: { authorization: 'Bearer wrong-token' } })).status,
    ).toBe(401);
    const authorized = await server.request('/api/nothing', {
      headers: { authorization: 'Bearer a-very-long-api-token' },
    });
    expect(authorized.status).toBe(404);
    expect((await server.request('/healthz')).status).toBe(200);
  });
});
