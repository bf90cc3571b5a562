import type { ResolvedConfig } from '../config/index.ts';
import type { Finding } from './finding.ts';
import { allowedAddress } from './ip-ranges.ts';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
const isLoopback = (host: string) => LOOPBACK.has(host) || host.startsWith('127.');

const PLACEHOLDER =
  /(change.?me|changeit|example|default|placeholder|replace|password|passw0rd|secret|token|steward|letmein|qwerty|admin|test|dummy|sample)/i;

/** Why a token or key is guessable (without showing it), or null. */
export function weakSecretReason(value: string): string | null {
  const distinct = new Set(value).size;
  if (distinct < 8) return `it uses only ${distinct} distinct characters`;
  if (/^(.{1,8})\1+$/.test(value)) return 'it is a short pattern repeated';
  if (/(.)\1{5}/.test(value)) return 'it repeats one character six times in a row';
  if (ascendingRun(value) >= 6) return 'it contains a run like 123456 or abcdef';
  // A word in a long random value is chance; in a short one it is a placeholder someone kept.
  if (value.length < 40 && PLACEHOLDER.test(value)) return 'it contains a placeholder or dictionary word';
  return null;
}

function ascendingRun(value: string): number {
  let longest = 1;
  let run = 1;
  for (let index = 1; index < value.length; index++) {
    run = value.charCodeAt(index) === value.charCodeAt(index - 1) + 1 ? run + 1 : 1;
    longest = Math.max(longest, run);
  }
  return longest;
}

/** Listening address and tokens, the sentinel, MCP server URLs, the database link, SSRF exceptions. */
export function settingsFindings(config: ResolvedConfig): Finding[] {
  const findings: Finding[] = [];
  const token = config.api_token;
  if (!token && !isLoopback(config.host)) {
    findings.push({
      id: 'no-api-token-public-bind',
      severity: 'critical',
      message: `HOST is ${config.host}, a non-loopback address, and no API token is set: anyone who can reach the port could use the API (steward start refuses to listen like this).`,
      fix: 'Set STEWARD_API_TOKEN to at least 32 random characters (openssl rand -hex 32), or HOST=127.0.0.1 behind a reverse proxy.',
    });
  } else if (!token) {
    findings.push({
      id: 'no-api-token',
      severity: 'low',
      message: 'No API token is set: any program on this machine can use the API on the loopback address.',
      fix: 'Set STEWARD_API_TOKEN (openssl rand -hex 32) if other users or programs share this machine.',
    });
  }
  for (const [key, envName, value] of [
    ['api_token', 'STEWARD_API_TOKEN', token],
    ['secret_key', 'STEWARD_SECRET_KEY', config.secret_key],
  ] as const) {
    if (!value) continue;
    const weak = weakSecretReason(value);
    if (weak) {
      findings.push({
        id: `${key.replace('_', '-')}-weak`,
        severity: 'high',
        message: `${key} looks guessable: ${weak}.`,
        fix: `Replace ${envName} with a random value: openssl rand -hex 32.`,
      });
    } else if (value.length < 32) {
      findings.push({
        id: `${key.replace('_', '-')}-short`,
        severity: 'medium',
        message: `${key} has ${value.length} characters; a brute-force attempt on a short value is cheaper than it should be.`,
        fix: `Use at least 32 random characters for ${envName}: openssl rand -hex 32.`,
      });
    }
  }
  if (token && config.secret_key && token === config.secret_key) {
    findings.push({
      id: 'api-token-reused',
      severity: 'medium',
      message:
        'api_token and secret_key are the same value: leaking the API token also exposes stored credentials.',
      fix: 'Give STEWARD_API_TOKEN and STEWARD_SECRET_KEY different random values.',
    });
  }
  if (!config.sentinel.enabled) {
    findings.push({
      id: 'sentinel-disabled',
      severity: 'medium',
      message: 'sentinel.enabled is false: actions the model proposes run without the independent check.',
      fix: 'Remove sentinel.enabled: false from steward.yaml.',
    });
  }
  config.mcp_servers.forEach((server, index) => {
    if (!server.url) return;
    const url = new URL(server.url);
    if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
      findings.push({
        id: 'mcp-server-plain-http',
        severity: 'medium',
        message: `mcp_servers.${index} (${server.name}) is reached over plain http at ${url.host}: its headers and results travel unencrypted.`,
        fix: `Use an https:// URL for ${server.name}.`,
      });
    }
  });
  if (config.database_url) {
    const url = new URL(config.database_url);
    const sslmode = url.searchParams.get('sslmode');
    if (!isLoopback(url.hostname) && !url.hostname.startsWith('/') && (!sslmode || sslmode === 'disable')) {
      findings.push({
        id: 'database-without-tls',
        severity: 'low',
        message: `DATABASE_URL points at ${url.hostname} without sslmode, so conversations and credentials may cross the network unencrypted.`,
        fix: 'Add ?sslmode=require (or verify-full) to DATABASE_URL, unless the link is private (a Docker network).',
      });
    }
  }
  const broad = config.security.ssrf_allow.filter((entry) => /^(0\.0\.0\.0\/0|::\/0|\*)$/.test(entry.trim()));
  if (broad.length > 0) {
    findings.push({
      id: 'ssrf-allow-everything',
      severity: 'high',
      message: `security.ssrf_allow contains ${broad.join(', ')}: the model can make Steward fetch any internal address (cloud metadata, routers, the database).`,
      fix: 'List only the hosts or ranges Steward needs, e.g. 192.168.1.20/32.',
    });
  }
  const metadata = config.security.ssrf_allow.find((entry) => allowedAddress('169.254.169.254', [entry]));
  if (metadata && broad.length === 0) {
    findings.push({
      id: 'ssrf-allow-metadata',
      severity: 'high',
      message: `security.ssrf_allow entry ${metadata} lets the model reach the cloud metadata address 169.254.169.254.`,
      fix: 'Remove the link-local range from security.ssrf_allow.',
    });
  }
  return findings;
}
