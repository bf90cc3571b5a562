import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/index.ts';
import type { Database } from '../db/index.ts';
import { silentLogger } from '../logging/logger.ts';
import { createServerApp } from './app.ts';
import { DEFAULT_CSP, securityHeaders } from './security-headers.ts';

// The routes requested here never reach the database.
const database = {} as Database;

describe('security headers', () => {
  it('are on every response: a strict CSP that forbids framing, nosniff, no referrer', async () => {
    const config = loadConfig({ env: {}, cwd: process.cwd() });
    const page = new Hono().get('/page', (c) => c.html('<p>hi</p>'));
    const app = createServerApp({ database, logger: silentLogger(), config: () => config, routes: [page] });
    for (const path of ['/healthz', '/page', '/nowhere']) {
      const response = await app.request(path);
      expect(response.headers.get('content-security-policy')).toBe(DEFAULT_CSP);
      expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    }
  });

  it('keeps a policy a route set for itself (a dashboard widening its own CSP)', async () => {
    const config = loadConfig({ env: {}, cwd: process.cwd() });
    const csp = "default-src 'self'; img-src https:; frame-ancestors 'none'";
    const dashboard = new Hono();
    dashboard.use('/dashboard/*', securityHeaders({ csp }));
    dashboard.get('/dashboard/home', (c) => c.html('<h1>Steward</h1>'));
    const app = createServerApp({
      database,
      logger: silentLogger(),
      config: () => config,
      routes: [dashboard],
    });
    const response = await app.request('/dashboard/home');
    expect(response.headers.get('content-security-policy')).toBe(csp);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
  });
});
