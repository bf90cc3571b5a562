import { type ResolvedConfig, stewardCommand } from '../config/index.ts';
import { errorMessage } from '../errors.ts';
import type { Finding } from './finding.ts';

/** Routes that must refuse a request without credentials whenever an owner token is set. */
const GUARDED_ROUTES = ['/api/usage', '/api/channels', '/api/tokens', '/api/pairing', '/metrics'];
const LOOPBACK_HOST = /^(localhost|127\.\d+\.\d+\.\d+|::1|\[::1\])$/;

const HEADERS: Array<[string, string]> = [
  ['content-security-policy', 'a Content-Security-Policy (scripts and frames limited to Steward itself)'],
  ['x-frame-options', 'X-Frame-Options (no framing by other sites)'],
  ['x-content-type-options', 'X-Content-Type-Options: nosniff'],
];

/**
 * `security audit --deep`: asks the running server at `serverUrl` what a stranger would get —
 * routes answered without a token, missing security headers on the dashboard — and, when a
 * public URL is set, whether TLS sits in front of it. Only GET requests; nothing is changed.
 */
export async function deepFindings(
  config: ResolvedConfig,
  serverUrl: string,
  fetchImpl: typeof fetch = fetch,
): Promise<Finding[]> {
  const findings: Finding[] = [];
  const get = (url: string) => fetchImpl(url, { redirect: 'manual', signal: AbortSignal.timeout(10_000) });
  try {
    await get(`${serverUrl}/healthz`);
  } catch (error) {
    return [
      {
        id: 'deep-server-not-running',
        severity: 'low',
        message: `No Steward server answered at ${serverUrl} (${errorMessage(error)}), so --deep checked nothing there.`,
        fix: `Start it (${stewardCommand()} start), then run ${stewardCommand()} security audit --deep again.`,
      },
    ];
  }
  const exposed = !LOOPBACK_HOST.test(config.host);
  for (const route of GUARDED_ROUTES) {
    const response = await get(`${serverUrl}${route}`);
    await response.body?.cancel();
    if (response.status >= 200 && response.status < 300) {
      findings.push({
        id: 'open-route',
        severity: exposed ? 'critical' : 'medium',
        message: `GET ${route} answered ${response.status} without any token: ${exposed ? 'anyone who reaches the server' : 'any program or person on this machine'} can read it.`,
        fix: `Set STEWARD_API_TOKEN (${stewardCommand()} onboard makes one) and restart the server.`,
      });
    }
  }
  const login = await get(`${serverUrl}/login`);
  await login.body?.cancel();
  for (const [header, what] of HEADERS) {
    if (!login.headers.get(header)) {
      findings.push({
        id: 'missing-security-header',
        severity: 'medium',
        message: `The dashboard (GET /login) is served without ${what}.`,
        fix: 'If a reverse proxy strips headers, let it pass Steward’s own; otherwise report this as a bug.',
      });
    }
  }
  findings.push(...(await tlsFindings(config.public_url, get)));
  return findings;
}

async function tlsFindings(
  publicUrl: string | undefined,
  get: (url: string) => Promise<Response>,
): Promise<Finding[]> {
  if (!publicUrl) return [];
  const base = publicUrl.replace(/\/+$/, '');
  const url = new URL(base);
  if (url.protocol === 'http:' && !LOOPBACK_HOST.test(url.hostname)) {
    return [
      {
        id: 'no-tls-in-front',
        severity: 'high',
        message: `STEWARD_PUBLIC_URL is ${base}: tokens, cookies and messages cross the network unencrypted, and chat platforms refuse plain-http webhooks.`,
        fix: 'Put TLS in front (a reverse proxy such as Caddy, or a tunnel) and set STEWARD_PUBLIC_URL to its https:// address.',
      },
    ];
  }
  if (url.protocol !== 'https:') return [];
  let response: Response;
  try {
    response = await get(`${base}/healthz`);
    await response.body?.cancel();
  } catch (error) {
    return [
      {
        id: 'public-url-unreachable',
        severity: 'medium',
        message: `${base}/healthz does not answer from here: ${errorMessage(error)}.`,
        fix: 'Check the proxy or tunnel in front of Steward and its certificate.',
      },
    ];
  }
  if (response.headers.get('strict-transport-security')) return [];
  return [
    {
      id: 'no-hsts',
      severity: 'low',
      message: `${base} answers over TLS without Strict-Transport-Security, so a browser may still try plain http first.`,
      fix: 'Have the TLS proxy send Strict-Transport-Security: max-age=31536000.',
    },
  ];
}
