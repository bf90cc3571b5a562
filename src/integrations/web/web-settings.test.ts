import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/index.ts';
import { ConfigError } from '../../errors.ts';
import { allowEntryFor, allowedFor } from './web-settings.ts';

const load = (env: Record<string, string>) => loadConfig({ env, cwd: '/' });

describe('web settings', () => {
  it('reads the providers, web.allow_hosts and the budget from the environment, keeping the key secret', () => {
    const config = load({
      BRAVE_SEARCH_API_KEY: 'BSA-secret-key-123',
      BRAVE_SEARCH_API_URL: 'http://127.0.0.1:9000/res/v1',
      SEARXNG_URL: 'https://me:searx-pass@search.lan/',
      STEWARD_WEB_ALLOW_HOSTS: 'intranet.lan:80, 192.168.1.20:8080,[::1]:3000',
    });
    expect(config.web.brave).toEqual({
      api_key: 'BSA-secret-key-123',
      api_url: 'http://127.0.0.1:9000/res/v1',
    });
    expect(config.web.searxng.url).toBe('https://me:searx-pass@search.lan/');
    expect(config.web.allow_hosts).toEqual(['intranet.lan:80', '192.168.1.20:8080', '[::1]:3000']);
    expect(config.secrets).toEqual(expect.arrayContaining(['BSA-secret-key-123', 'searx-pass']));
    expect(config.limits.web_calls_per_user_per_day).toBe(200);
    expect(load({}).web.brave.api_url).toBe('https://api.search.brave.com/res/v1');
  });

  it('refuses an allow_hosts entry without a port, naming the variable and the form', () => {
    try {
      load({ STEWARD_WEB_ALLOW_HOSTS: 'localhost' });
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain('STEWARD_WEB_ALLOW_HOSTS');
      expect((error as Error).message).toContain('entries are host:port, e.g. localhost:8080');
    }
  });

  it('opens a listed host only on its port, besides security.ssrf_allow on every port', () => {
    const settings = load({
      STEWARD_WEB_ALLOW_HOSTS: 'nas.lan:8080,127.0.0.1:3000,[::1]:443',
      STEWARD_SSRF_ALLOW: '10.0.0.0/8',
    });
    expect(allowedFor(new URL('http://nas.lan:8080/x'), settings)).toEqual(['10.0.0.0/8', 'nas.lan']);
    expect(allowedFor(new URL('http://nas.lan/x'), settings)).toEqual(['10.0.0.0/8']);
    expect(allowedFor(new URL('http://localhost:3000/'), settings)).toEqual(['10.0.0.0/8', '127.0.0.1']);
    expect(allowedFor(new URL('https://[::1]/'), settings)).toEqual(['10.0.0.0/8', '::1']);
    expect(allowEntryFor(new URL('https://[::1]/'))).toBe('[::1]:443');
    expect(allowEntryFor(new URL('http://Intranet.LAN/'))).toBe('intranet.lan:80');
  });
});
