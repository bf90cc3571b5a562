import type { Config } from '../../config/index.ts';

/** The settings the web skills read (on every call, so a reloaded config applies at once). */
export type WebSettings = Pick<Config, 'web' | 'security' | 'limits'>;

/** The port a URL connects to: its own, or its scheme's default. */
export function portOf(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/** `host:port` / `[v6]:port` → its parts (host lower-case, without brackets). */
export function parseHostPort(entry: string): { host: string; port: number } | null {
  const match = /^(?:\[([0-9a-f:.]+)\]|([^\s:/[\]@]+)):(\d{1,5})$/i.exec(entry.trim());
  if (!match) return null;
  return { host: (match[1] ?? match[2]!).toLowerCase(), port: Number(match[3]) };
}

/**
 * What the SSRF guard may open for a request to `url`: `security.ssrf_allow` (any port) and
 * the hosts of `web.allow_hosts` listed with this URL's port. A host name in an entry opens
 * what that name resolves to; an address opens that address, whatever name reaches it.
 */
export function allowedFor(url: URL, settings: WebSettings): string[] {
  const port = portOf(url);
  const hosts = settings.web.allow_hosts
    .map(parseHostPort)
    .filter((entry): entry is { host: string; port: number } => entry !== null && entry.port === port)
    .map((entry) => entry.host);
  return [...settings.security.ssrf_allow, ...hosts];
}

/** The `host:port` entry of web.allow_hosts that would open `url` (an IPv6 host keeps its brackets). */
export function allowEntryFor(url: URL): string {
  return `${url.hostname}:${portOf(url)}`;
}
