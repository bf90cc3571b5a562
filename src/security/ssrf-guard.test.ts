import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressRange, allowedAddress } from './ip-ranges.ts';
import { createSsrfGuard, type ResolveAll, SsrfBlockedError } from './ssrf-guard.ts';

/** A resolver from a table: what each name resolves to in the test. */
const table =
  (names: Record<string, string[] | (() => string[])>): ResolveAll =>
  async (hostname) => {
    const entry = names[hostname];
    if (!entry) throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
    return (typeof entry === 'function' ? entry() : entry).map((address) => ({
      address,
      family: address.includes(':') ? 6 : 4,
    }));
  };

describe('address ranges', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.9.9.9', 'loopback'],
    ['10.20.30.40', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'shared (carrier-grade NAT)'],
    ['0.0.0.0', 'this-network'],
    ['224.0.0.1', 'multicast'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['fe80::1%eth0', 'link-local'],
    ['fd00::1', 'unique-local (private)'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['64:ff9b::c0a8:101', 'private'],
    ['2002:c0a8:101::1', 'private'],
  ])('%s is %s', (address, range) => {
    expect(addressRange(address)).toBe(range);
  });

  it.each(['8.8.8.8', '93.184.216.34', '172.32.0.1', '2606:4700:4700::1111'])('%s is public', (address) => {
    expect(addressRange(address)).toBeNull();
  });

  it('opens exactly the configured ranges', () => {
    expect(allowedAddress('192.168.1.20', ['192.168.1.0/24'])).toBe(true);
    expect(allowedAddress('192.168.2.20', ['192.168.1.0/24'])).toBe(false);
    expect(allowedAddress('::ffff:192.168.1.20', ['192.168.1.0/24'])).toBe(true);
    expect(allowedAddress('10.0.0.5', ['10.0.0.5'])).toBe(true);
    expect(allowedAddress('fd00::5', ['fd00::/8'])).toBe(true);
  });
});

describe('the SSRF guard', () => {
  const resolve = table({
    'example.com': ['93.184.216.34'],
    localhost: ['127.0.0.1', '::1'],
    'metadata.internal': ['169.254.169.254'],
    'mixed.example': ['93.184.216.34', '10.0.0.7'],
    'nas.lan': ['192.168.1.20'],
  });
  const guard = createSsrfGuard({ resolve });

  it('allows a public host and refuses loopback, private and link-local targets, by name or literal', async () => {
    expect(await guard.check('https://example.com/page')).toMatchObject({
      ok: true,
      addresses: ['93.184.216.34'],
    });
    const refused = async (url: string) => {
      const result = await guard.check(url);
      if (result.ok) throw new Error(`${url} was allowed`);
      return result.reason;
    };
    expect(await refused('http://localhost:3000/api')).toContain(
      'localhost resolves to 127.0.0.1, a loopback address',
    );
    expect(await refused('http://169.254.169.254/latest/meta-data/')).toContain('link-local');
    expect(await refused('http://metadata.internal/')).toContain('link-local');
    expect(await refused('http://[::1]:8080/')).toContain('loopback');
    expect(await refused('http://[::ffff:7f00:1]/')).toContain('loopback');
    expect(await refused('http://2130706433/')).toContain('127.0.0.1');
    expect(await refused('http://0x7f.1/')).toContain('127.0.0.1');
    expect(await refused('http://10.0.0.1/')).toContain('private');
    // Every address counts: one private address among public ones refuses the name.
    expect(await refused('http://mixed.example/')).toContain('10.0.0.7, a private address');
    expect(await refused('file:///etc/passwd')).toContain('file: URLs are not fetched');
    expect(await refused('http://user:pw@example.com/')).toContain('user name or password');
    expect(await refused('http://nowhere.invalid/')).toContain('does not resolve');
  });

  it('lets configured hosts and ranges through, and nothing else', async () => {
    const lan = createSsrfGuard({ resolve, allow: ['nas.lan', '10.0.0.0/24'] });
    expect((await lan.check('http://nas.lan/files')).ok).toBe(true);
    expect((await lan.check('http://10.0.0.9/')).ok).toBe(true);
    expect((await lan.check('http://10.0.1.9/')).ok).toBe(false);
    expect((await lan.check('http://localhost/')).ok).toBe(false);
  });

  describe('fetching', () => {
    let server: Server;
    let port: number;
    const hits: string[] = [];
    beforeAll(async () => {
      server = createServer((request, response) => {
        hits.push(request.url ?? '');
        if (request.url === '/to-metadata') {
          response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
          response.end();
        } else if (request.url === '/to-self') {
          response.writeHead(301, { location: '/hello' });
          response.end();
        } else response.end(`hello from ${request.url}`);
      });
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((done) => server.close(() => done())));

    it('refuses a loopback server unless it is allowed, then follows redirects it allows', async () => {
      await expect(guard.fetch(`http://127.0.0.1:${port}/hello`)).rejects.toThrow(SsrfBlockedError);
      expect(hits).toEqual([]);
      const local = createSsrfGuard({ resolve, allow: ['127.0.0.1'] });
      const response = await local.fetch(`http://127.0.0.1:${port}/to-self`);
      expect(response.status).toBe(200);
      expect(await response.text()).toBe('hello from /hello');
    });

    it('checks every redirect: an allowed server cannot bounce a fetch to the metadata address', async () => {
      const local = createSsrfGuard({ resolve, allow: ['127.0.0.1'] });
      await expect(local.fetch(`http://127.0.0.1:${port}/to-metadata`)).rejects.toThrow(
        /169\.254\.169\.254, a link-local address/,
      );
    });

    it('hands a redirect back unfollowed with redirect: manual, refusals worded by allowHint', async () => {
      const local = createSsrfGuard({
        resolve,
        allow: ['127.0.0.1'],
        allowHint: 'list it in web.allow_hosts',
      });
      hits.length = 0;
      const response = await local.fetch(`http://127.0.0.1:${port}/to-metadata`, { redirect: 'manual' });
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe('http://169.254.169.254/latest/meta-data/');
      await response.body?.cancel();
      expect(hits).toEqual(['/to-metadata']);
      expect(await local.check('http://10.0.0.1/')).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/private address; list it in web\.allow_hosts$/),
      });
    });

    it('checks the address again when connecting, so a name that rebinds to loopback is refused', async () => {
      let calls = 0;
      const rebinding = createSsrfGuard({
        resolve: table({ 'rebind.example': () => (calls++ === 0 ? ['93.184.216.34'] : ['127.0.0.1']) }),
      });
      hits.length = 0;
      await expect(rebinding.fetch(`http://rebind.example:${port}/hello`)).rejects.toThrow(/loopback/);
      expect(calls).toBe(2);
      expect(hits).toEqual([]);
    });
  });
});
