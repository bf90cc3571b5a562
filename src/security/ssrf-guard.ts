import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { Readable } from 'node:stream';
import { addressRange, allowedAddress } from './ip-ranges.ts';

/** Resolves a host name to every address it has (dns.lookup with `all: true`). Injectable for tests. */
export type ResolveAll = (hostname: string) => Promise<LookupAddress[]>;

export type SsrfGuardOptions = {
  /** Host names or IP/CIDR ranges that may be fetched even though they are private (`security.ssrf_allow`). */
  allow?: readonly string[];
  resolve?: ResolveAll;
  maxRedirects?: number;
  /** How a refusal says to open the address (default: `add it to security.ssrf_allow …`). */
  allowHint?: string;
};

export type UrlCheck = { ok: true; url: URL; addresses: string[] } | { ok: false; reason: string };

export type SsrfGuard = {
  /** Whether `url` may be fetched: scheme, credentials, and every address its host resolves to. */
  check(url: string | URL): Promise<UrlCheck>;
  /**
   * Fetches `url` like `fetch`, connecting only to addresses the policy allows (checked again
   * at connect time, so DNS rebinding between check and connect does not help) and checking
   * every redirect. Rejects with SsrfBlockedError when a hop is refused. With `redirect:
   * 'manual'` a redirect is returned as is, for a caller that checks each hop by its own rules.
   */
  fetch(
    url: string | URL,
    init?: {
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      signal?: AbortSignal;
      redirect?: 'follow' | 'manual';
    },
  ): Promise<Response>;
};

export class SsrfBlockedError extends Error {
  readonly code = 'ssrf_blocked';
}

const systemResolve: ResolveAll = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  );

/**
 * The SSRF guard for every URL the model can make Steward fetch: http(s) only, no credentials
 * in the URL, and no loopback, private, link-local or otherwise non-public address — unless the
 * host name or its range is in `allow`. A name is resolved and every address checked.
 */
export function createSsrfGuard(options: SsrfGuardOptions = {}): SsrfGuard {
  const allow = (options.allow ?? []).map((entry) => entry.trim().toLowerCase()).filter(Boolean);
  const resolve = options.resolve ?? systemResolve;
  const maxRedirects = options.maxRedirects ?? 5;
  const allowHint = options.allowHint ?? 'add it to security.ssrf_allow if Steward should reach it';
  const hostAllowed = (hostname: string) => allow.includes(hostname.toLowerCase().replace(/^\[|\]$/g, ''));
  const refusal = (address: string, hostname: string): string | null => {
    const range = addressRange(address);
    if (range === null || allowedAddress(address, allow) || hostAllowed(hostname)) return null;
    return `${hostname} resolves to ${address}, a ${range} address; ${allowHint}`;
  };

  const check = async (input: string | URL): Promise<UrlCheck> => {
    let url: URL;
    try {
      url = new URL(input);
    } catch {
      return { ok: false, reason: `"${String(input)}" is not a URL` };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return { ok: false, reason: `${url.protocol} URLs are not fetched; use http or https` };
    if (url.username || url.password)
      return { ok: false, reason: 'URLs with a user name or password are not fetched' };
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    let addresses: string[];
    if (isIP(hostname)) addresses = [hostname];
    else {
      try {
        addresses = (await resolve(hostname)).map((entry) => entry.address);
      } catch (error) {
        return { ok: false, reason: `${hostname} does not resolve (${(error as Error).message})` };
      }
      if (addresses.length === 0) return { ok: false, reason: `${hostname} has no address` };
    }
    for (const address of addresses) {
      const refused = refusal(address, hostname);
      if (refused) return { ok: false, reason: refused };
    }
    return { ok: true, url, addresses };
  };

  // Re-resolves at connect time and refuses any address the policy does not allow.
  const guardedLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname).then(
      (entries) => {
        const refused = entries.map((entry) => refusal(entry.address, hostname)).find(Boolean);
        if (refused || entries.length === 0) {
          callback(new SsrfBlockedError(refused ?? `${hostname} has no address`), '', 4);
          return;
        }
        if ((lookupOptions as { all?: boolean }).all) callback(null, entries as never);
        else callback(null, entries[0]!.address, entries[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 4),
    );
  };

  const fetchOnce = (url: URL, init: Parameters<SsrfGuard['fetch']>[1] = {}) =>
    new Promise<http.IncomingMessage>((resolvePromise, reject) => {
      const request = (url.protocol === 'https:' ? https : http).request(url, {
        method: init.method ?? 'GET',
        headers: init.headers,
        lookup: guardedLookup,
        signal: init.signal,
      });
      request.once('response', resolvePromise);
      request.once('error', reject);
      request.end(init.body);
    });

  return {
    check,
    async fetch(input, init = {}) {
      let target: string | URL = input;
      for (let hop = 0; hop <= maxRedirects; hop++) {
        const checked = await check(target);
        if (!checked.ok) throw new SsrfBlockedError(`Not fetched: ${checked.reason}.`);
        const response = await fetchOnce(checked.url, init);
        const status = response.statusCode ?? 0;
        const location = response.headers.location;
        if (status >= 300 && status < 400 && location && init.redirect !== 'manual') {
          response.resume();
          target = new URL(location, checked.url);
          continue;
        }
        const headers = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          if (Array.isArray(value)) for (const item of value) headers.append(name, item);
          else if (value !== undefined) headers.set(name, value);
        }
        const body = status === 204 || status === 304 ? null : (Readable.toWeb(response) as ReadableStream);
        return new Response(body, { status, statusText: response.statusMessage, headers });
      }
      throw new SsrfBlockedError(`Not fetched: more than ${maxRedirects} redirects.`);
    },
  };
}
