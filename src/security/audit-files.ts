import { chmodSync, type Dirent, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { ENV_VARS, isSecretName, type ResolvedConfig } from '../config/index.ts';
import type { Finding } from './finding.ts';

/** Key and credential files Steward or its integrations keep in the data dir. */
const KEY_FILE =
  /(\.key|\.pem|\.p12|\.pfx)$|(^|[._-])(key|keys|secret|secrets|credentials?|tokens?)([._-]|$)/i;

const mode = (bits: number) => `0${(bits & 0o777).toString(8)}`;

/** The data dir and key files in it must be private to Steward's user (0700 / 0600). */
export function fileFindings(config: ResolvedConfig): Finding[] {
  const findings: Finding[] = [];
  let dirMode: number;
  try {
    const stats = statSync(config.dataDir);
    if (!stats.isDirectory()) return findings;
    dirMode = stats.mode;
  } catch {
    return findings;
  }
  if (dirMode & 0o077) {
    findings.push({
      id: 'data-dir-permissions',
      severity: 'high',
      message: `The data dir ${config.dataDir} is open to other users (mode ${mode(dirMode)}): it holds the database, conversations and credentials.`,
      fix: `chmod 700 ${config.dataDir}`,
      repair: { what: `chmod 700 ${config.dataDir}`, apply: () => chmodSync(config.dataDir, 0o700) },
    });
  }
  for (const file of keyFiles(config.dataDir)) {
    const stats = statSync(file);
    if (stats.mode & 0o077) {
      findings.push({
        id: 'key-file-permissions',
        severity: 'high',
        message: `The key file ${file} is readable by other users (mode ${mode(stats.mode)}).`,
        fix: `chmod 600 ${file}`,
        repair: { what: `chmod 600 ${file}`, apply: () => chmodSync(file, 0o600) },
      });
    }
  }
  return findings;
}

/**
 * The `.env` file Steward reads from the working directory: it usually holds the owner token and
 * the bot tokens, so it must be private (0600) and belong to the user Steward runs as.
 */
export function envFileFindings(cwd: string): Finding[] {
  const file = path.join(cwd, '.env');
  let stats: ReturnType<typeof statSync>;
  let text: string;
  try {
    stats = statSync(file);
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const findings: Finding[] = [];
  const secrets = Object.entries(parseEnv(text))
    .filter(([name, value]) => value && isSecretName(name))
    .map(([name]) => name);
  if (stats.mode & 0o077) {
    findings.push({
      id: 'env-file-permissions',
      severity: secrets.length ? 'high' : 'low',
      message: `${file} is readable by other users (mode ${mode(stats.mode)})${secrets.length ? ` and holds ${secrets.join(', ')}` : ''}.`,
      fix: `chmod 600 ${file}`,
      repair: { what: `chmod 600 ${file}`, apply: () => chmodSync(file, 0o600) },
    });
  }
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) {
    findings.push({
      id: 'env-file-owner',
      severity: 'medium',
      message: `${file} belongs to uid ${stats.uid}, not to the user Steward runs as (uid ${uid}): that account can change Steward's settings and read its tokens.`,
      fix: `sudo chown ${uid} ${file}`,
    });
  }
  return findings;
}

function keyFiles(dataDir: string): string[] {
  const found: string[] = [];
  const visit = (dir: string, depth: number) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      // The embedded database's own files are covered by the data dir's mode.
      if (entry.isDirectory() && depth > 0 && entry.name !== 'db' && entry.name !== 'skills')
        visit(full, depth - 1);
      else if (entry.isFile() && KEY_FILE.test(entry.name)) found.push(full);
    }
  };
  visit(dataDir, 1);
  return found.sort();
}

const CHANNEL_ENV_PREFIX: Record<string, string> = { googlechat: 'GOOGLE_CHAT', google_chat: 'GOOGLE_CHAT' };

/** The environment variable that replaces a steward.yaml key, when there is one. */
function envNameFor(key: string): string | undefined {
  if (key === 'llm.api_key') return 'OPENROUTER_API_KEY or LLM_API_KEY';
  if (key.startsWith('database_url')) return 'DATABASE_URL';
  const channel = /^channels\.([a-z_]+)\.([a-z_]+)$/.exec(key);
  if (channel)
    return `${CHANNEL_ENV_PREFIX[channel[1]!] ?? channel[1]!.toUpperCase()}_${channel[2]!.toUpperCase()}`;
  return ENV_VARS.find((entry) => entry.key === key)?.name;
}
const REFERENCE = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$|^Bearer \$\{[A-Za-z_][A-Za-z0-9_]*\}$/;

/**
 * Secret values written into steward.yaml rather than the environment. Names the keys, never
 * the values. `${VAR}` references are fine: the value stays in the environment.
 */
export function configFileFindings(config: ResolvedConfig): Finding[] {
  if (!config.configPath) return [];
  let values: unknown;
  try {
    values = parseYaml(readFileSync(config.configPath, 'utf8'));
  } catch {
    return [];
  }
  if (!values || typeof values !== 'object') return [];
  const file = values as Record<string, unknown>;
  const keys: string[] = [];
  for (const key of ['secret_key', 'api_token'])
    if (typeof file[key] === 'string' && file[key]) keys.push(key);
  const llm = file.llm as Record<string, unknown> | undefined;
  if (typeof llm?.api_key === 'string' && llm.api_key) keys.push('llm.api_key');
  if (typeof file.database_url === 'string') {
    try {
      if (new URL(file.database_url).password) keys.push('database_url (its password)');
    } catch {
      // not a URL: the config loader reports it
    }
  }
  const channels = file.channels as Record<string, unknown> | undefined;
  for (const [channel, settings] of Object.entries(channels ?? {})) {
    if (!settings || typeof settings !== 'object' || channel === 'modes') continue;
    for (const [key, value] of Object.entries(settings as Record<string, unknown>)) {
      if (typeof value === 'string' && value && isSecretName(key) && !REFERENCE.test(value))
        keys.push(`channels.${channel}.${key}`);
    }
  }
  const elevenlabs = (file.voice as { elevenlabs?: { api_key?: unknown } } | undefined)?.elevenlabs;
  if (typeof elevenlabs?.api_key === 'string' && elevenlabs.api_key && !REFERENCE.test(elevenlabs.api_key))
    keys.push('voice.elevenlabs.api_key');
  const servers = Array.isArray(file.mcp_servers) ? (file.mcp_servers as Array<Record<string, unknown>>) : [];
  servers.forEach((server, index) => {
    for (const field of ['env', 'headers'] as const) {
      for (const [name, value] of Object.entries((server?.[field] as Record<string, unknown>) ?? {})) {
        if (typeof value === 'string' && value && isSecretName(name) && !REFERENCE.test(value.trim()))
          keys.push(`mcp_servers.${index}.${field}.${name}`);
      }
    }
  });
  if (keys.length === 0) return [];
  const envNames = keys.map(envNameFor).filter(Boolean);
  let readable = false;
  try {
    readable = (statSync(config.configPath).mode & 0o044) !== 0;
  } catch {
    // gone since it was loaded
  }
  return [
    {
      id: 'secret-in-config-file',
      severity: 'high',
      message: `${path.basename(config.configPath)} holds secret values at ${keys.join(', ')}${readable ? '; the file is also readable by other users' : ''}. Config files get copied, committed and backed up.`,
      fix: `Move them to environment variables${envNames.length ? ` (${[...new Set(envNames)].join(', ')})` : ''} or \${VAR} references (mcp_servers), and delete them from ${config.configPath}.`,
    },
  ];
}
