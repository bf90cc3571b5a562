import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from '../errors.ts';
import envVars from './env-vars.json' with { type: 'json' };
import { resolveMcpServers } from './mcp-servers.ts';
import { OPENROUTER_BASE_URL, type Roster, resolveRoster } from './roster.ts';
import { type Config, configSchema, ROLES } from './schema.ts';

export type SettingSource = 'default' | 'file' | 'env';

export type LlmEndpoint = {
  provider: 'openrouter' | 'openai-compatible' | 'none';
  baseUrl: string | null;
  apiKey: string | null;
};

export type ResolvedConfig = Config & {
  /** Absolute path of the data dir. */
  dataDir: string;
  /** Absolute path of the user skills dir. */
  skillsDir: string;
  configPath: string | null;
  endpoint: LlmEndpoint;
  roster: Roster;
  /** Where each top-level or nested setting came from, keyed by dotted path. */
  sources: Record<string, { source: SettingSource; name: string }>;
  /** Every configured secret value, for log redaction. */
  secrets: string[];
};

type Env = Record<string, string | undefined>;

/** Environment variables and the config key each one sets (a table kept in env-vars.json). */
export const ENV_VARS: ReadonlyArray<{ name: string; key: string; description: string }> = envVars;

function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const parts = dotted.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (!next || typeof next !== 'object' || Array.isArray(next)) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts.at(-1)!] = value;
}

function readConfigFile(configPath: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(configPath, 'utf8');
  } catch (error) {
    throw new ConfigError('STEWARD_CONFIG', `cannot read ${configPath}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (error) {
    const reason = (error as Error).message.split('\n')[0];
    throw new ConfigError(path.basename(configPath), `not valid YAML: ${reason}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(path.basename(configPath), 'must be a mapping of settings (key: value)');
  }
  return parsed as Record<string, unknown>;
}

function flattenKeys(value: unknown, prefix = ''): string[] {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return prefix ? [prefix] : [];
  return Object.entries(value).flatMap(([key, inner]) =>
    flattenKeys(inner, prefix ? `${prefix}.${key}` : key),
  );
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys')
    return `unknown setting ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  if (issue.code === 'invalid_type') return `expected ${issue.expected}`;
  return issue.message;
}

/**
 * Reads steward.yaml (when present) and the environment, validates the merge, and resolves
 * the data dir, the LLM endpoint and the model roster. Throws ConfigError naming the first bad key.
 */
export function loadConfig(options: { env?: Env; cwd?: string } = {}): ResolvedConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const explicitPath = env.STEWARD_CONFIG;
  const candidate = path.resolve(cwd, explicitPath ?? 'steward.yaml');
  let fileValues: Record<string, unknown> = {};
  let configPath: string | null = null;
  if (explicitPath) {
    fileValues = readConfigFile(candidate);
    configPath = candidate;
  } else {
    try {
      fileValues = readConfigFile(candidate);
      configPath = candidate;
    } catch (error) {
      if (!(error instanceof ConfigError) || !error.message.includes('cannot read')) throw error;
    }
  }

  const sources: ResolvedConfig['sources'] = {};
  const fileName = configPath ? path.basename(configPath) : 'steward.yaml';
  for (const key of flattenKeys(fileValues)) sources[key] = { source: 'file', name: `${fileName}: ${key}` };

  const merged = structuredClone(fileValues);
  const envKeyToName = new Map<string, string>();
  for (const { name, key } of ENV_VARS) {
    const raw = env[name];
    if (raw === undefined || raw === '' || key.includes('*')) continue;
    // OPENROUTER_API_KEY applies only when no explicit OpenAI-compatible endpoint is set.
    if (name === 'OPENROUTER_API_KEY' && env.LLM_BASE_URL) continue;
    if (name === 'LLM_API_KEY' && !env.LLM_BASE_URL && env.OPENROUTER_API_KEY) continue;
    setPath(merged, key, raw);
    sources[key] = { source: 'env', name };
    envKeyToName.set(key, name);
  }
  if (env.OPENROUTER_API_KEY && !env.LLM_BASE_URL) {
    setPath(merged, 'llm.base_url', OPENROUTER_BASE_URL);
    sources['llm.base_url'] = { source: 'env', name: 'OPENROUTER_API_KEY' };
  }
  const chatModel = env.LLM_MODEL;
  if (chatModel) {
    for (const role of ROLES) {
      if (role === 'embeddings') continue;
      setPath(merged, `llm.roles.${role}`, { model: chatModel, fallbacks: [] });
      sources[`llm.roles.${role}.model`] = { source: 'env', name: 'LLM_MODEL' };
      envKeyToName.set(`llm.roles.${role}.model`, 'LLM_MODEL');
    }
  }

  const result = configSchema.safeParse(merged);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const dotted = issue.path.map(String).join('.');
    const envName =
      envKeyToName.get(dotted) ?? [...envKeyToName].find(([key]) => dotted.startsWith(`${key}.`))?.[1];
    const label = envName ?? (dotted ? `${dotted} (${fileName})` : fileName);
    throw new ConfigError(label, describeIssue(issue));
  }
  const config = result.data;
  const dataDir = path.resolve(cwd, config.data_dir);
  const baseUrl = config.llm.base_url ?? null;
  const apiKey = config.llm.api_key ?? null;
  const isOpenRouter = baseUrl !== null && baseUrl.replace(/\/+$/, '') === OPENROUTER_BASE_URL;
  const endpoint: LlmEndpoint = {
    provider: baseUrl === null ? 'none' : isOpenRouter ? 'openrouter' : 'openai-compatible',
    baseUrl,
    apiKey,
  };
  if (isOpenRouter && !apiKey) throw new ConfigError('OPENROUTER_API_KEY', 'OpenRouter needs an API key');
  const { telegram, slack, whatsapp } = config.channels;
  const mcp = resolveMcpServers(config.mcp_servers, env);
  const secrets = [
    config.secret_key,
    config.api_token,
    apiKey,
    passwordOf(config.database_url),
    config.metrics_token,
    ...urlSecrets(config.alerts.webhook_url),
    ...headerValues(config.tracing.otlp_headers),
    passwordOf(config.email.imap_url),
    passwordOf(config.email.smtp_url),
    passwordOf(config.caldav.url),
    config.hubspot.access_token,
    config.google.client_secret,
    telegram.bot_token,
    telegram.webhook_secret,
    slack.bot_token,
    slack.signing_secret,
    whatsapp.access_token,
    whatsapp.app_secret,
    whatsapp.verify_token,
    config.channels.discord.bot_token,
    config.channels.matrix.access_token,
    passwordOf(config.channels.signal.cli_url),
    config.voice.elevenlabs.api_key,
    config.web.brave.api_key,
    passwordOf(config.web.searxng.url),
    ...mcp.secrets,
  ].filter((value): value is string => typeof value === 'string' && value.length > 0);
  return {
    ...config,
    mcp_servers: mcp.servers,
    dataDir,
    skillsDir: path.resolve(cwd, config.skills_dir ?? path.join(config.data_dir, 'skills')),
    configPath,
    endpoint,
    roster: resolveRoster(config.llm, isOpenRouter),
    sources,
    secrets,
  };
}

/** A webhook URL is a credential, and so is each of its query values (Google Chat's key and token). */
function urlSecrets(url: string | undefined): string[] {
  if (!url) return [];
  try {
    return [url, ...[...new URL(url).searchParams.values()].filter((value) => value.length >= 8)];
  } catch {
    return [url];
  }
}

/** Values of `key=value,key2=value2` (OTLP headers usually carry credentials). */
function headerValues(headers: string | undefined): string[] {
  if (!headers) return [];
  return headers.split(',').flatMap((pair) => {
    const value = pair.slice(pair.indexOf('=') + 1).trim();
    if (!pair.includes('=') || !value) return [];
    const decoded = decodeURIComponentSafe(value);
    // `Bearer abc…` / `Basic abc…`: the credential alone is a secret too.
    const credential = decoded.split(/\s+/).at(-1) ?? '';
    return [value, decoded, ...(credential.length >= 8 ? [credential] : [])];
  });
}

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function passwordOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const password = new URL(url).password;
    return password ? decodeURIComponent(password) : undefined;
  } catch {
    return undefined;
  }
}
