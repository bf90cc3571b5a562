import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from '../errors.ts';
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

/** Environment variables and the config key each one sets. */
export const ENV_VARS: ReadonlyArray<{ name: string; key: string; description: string }> = [
  {
    name: 'STEWARD_DATA_DIR',
    key: 'data_dir',
    description: 'data directory (embedded database, skills, lock)',
  },
  {
    name: 'DATABASE_URL',
    key: 'database_url',
    description: 'PostgreSQL server URL; unset = embedded PGlite',
  },
  {
    name: 'DATABASE_MAX_CONNECTIONS',
    key: 'database_max_connections',
    description: 'PostgreSQL connections per instance (all instances together must fit max_connections)',
  },
  {
    name: 'STEWARD_SHUTDOWN_GRACE_SECONDS',
    key: 'shutdown_grace_seconds',
    description: 'on SIGTERM, seconds running turns get to finish before they are interrupted',
  },
  {
    name: 'STEWARD_SKILLS_POLL_SECONDS',
    key: 'skills_poll_seconds',
    description: 'poll the skills dir every N seconds (shared network volume); 0 = change events',
  },
  { name: 'HOST', key: 'host', description: 'address the server listens on' },
  {
    name: 'STEWARD_ALLOWED_HOSTS',
    key: 'allowed_hosts',
    description: 'comma-separated extra Host names the server answers to',
  },
  { name: 'PORT', key: 'port', description: 'port the server listens on' },
  { name: 'LOG_LEVEL', key: 'log_level', description: 'fatal, error, warn, info, debug, trace or silent' },
  { name: 'STEWARD_SECRET_KEY', key: 'secret_key', description: 'key that encrypts stored credentials' },
  { name: 'STEWARD_API_TOKEN', key: 'api_token', description: 'bearer token required on /api/*' },
  { name: 'STEWARD_SKILLS_DIR', key: 'skills_dir', description: 'user skills directory' },
  { name: 'OPENROUTER_API_KEY', key: 'llm.api_key', description: 'OpenRouter key (sets the endpoint too)' },
  { name: 'LLM_BASE_URL', key: 'llm.base_url', description: 'any OpenAI-compatible endpoint' },
  { name: 'LLM_API_KEY', key: 'llm.api_key', description: 'key for LLM_BASE_URL' },
  { name: 'LLM_MODEL', key: 'llm.roles.*.model', description: 'model of every chat role' },
  { name: 'LLM_EMBEDDINGS_MODEL', key: 'llm.roles.embeddings.model', description: 'embeddings model' },
  { name: 'STEWARD_METRICS_TOKEN', key: 'metrics_token', description: 'bearer token for /metrics' },
  {
    name: 'STEWARD_ALERT_WEBHOOK_URL',
    key: 'alerts.webhook_url',
    description: 'Google Chat webhook for alerts',
  },
  { name: 'STEWARD_ALERT_EMAIL', key: 'alerts.email_to', description: 'address that receives alerts' },
  { name: 'STEWARD_SPEND_SOFT_USD', key: 'spend.daily_soft_usd', description: 'per-user daily spend alert' },
  { name: 'STEWARD_SPEND_HARD_USD', key: 'spend.daily_hard_usd', description: 'per-user daily spend limit' },
  { name: 'STEWARD_LOG_FILE', key: 'logs.file', description: 'also log to <data dir>/logs (true/false)' },
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    key: 'tracing.otlp_endpoint',
    description: 'OTLP collector; traces off unless set',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    key: 'tracing.otlp_traces_endpoint',
    description: 'OTLP traces URL',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_PROTOCOL',
    key: 'tracing.otlp_protocol',
    description: 'http/protobuf or http/json',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
    key: 'tracing.otlp_protocol',
    description: 'as OTEL_EXPORTER_OTLP_PROTOCOL',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_HEADERS',
    key: 'tracing.otlp_headers',
    description: 'headers sent to the collector',
  },
  { name: 'OTEL_SERVICE_NAME', key: 'tracing.service_name', description: 'service.name of the spans' },
  { name: 'STEWARD_PUBLIC_URL', key: 'public_url', description: 'base URL people reach this server at' },
  { name: 'STEWARD_ALLOW', key: 'channels.allow', description: 'allowlist of channel:sender[=USER]' },
  { name: 'TELEGRAM_BOT_TOKEN', key: 'channels.telegram.bot_token', description: 'Telegram bot token' },
  {
    name: 'TELEGRAM_WEBHOOK_SECRET',
    key: 'channels.telegram.webhook_secret',
    description: 'Telegram webhook secret token',
  },
  { name: 'TELEGRAM_API_ROOT', key: 'channels.telegram.api_root', description: 'Telegram Bot API root' },
  { name: 'SLACK_BOT_TOKEN', key: 'channels.slack.bot_token', description: 'Slack bot token (xoxb-)' },
  { name: 'SLACK_SIGNING_SECRET', key: 'channels.slack.signing_secret', description: 'Slack signing secret' },
  { name: 'SLACK_API_URL', key: 'channels.slack.api_url', description: 'Slack Web API base URL' },
  {
    name: 'WHATSAPP_ACCESS_TOKEN',
    key: 'channels.whatsapp.access_token',
    description: 'WhatsApp Cloud API token',
  },
  { name: 'WHATSAPP_APP_SECRET', key: 'channels.whatsapp.app_secret', description: 'Meta app secret' },
  {
    name: 'WHATSAPP_VERIFY_TOKEN',
    key: 'channels.whatsapp.verify_token',
    description: 'WhatsApp webhook verify token',
  },
  {
    name: 'WHATSAPP_PHONE_NUMBER_ID',
    key: 'channels.whatsapp.phone_number_id',
    description: 'WhatsApp phone number id',
  },
  { name: 'WHATSAPP_GRAPH_URL', key: 'channels.whatsapp.graph_url', description: 'Graph API base URL' },
  {
    name: 'GOOGLE_CHAT_PROJECT_NUMBER',
    key: 'channels.googlechat.project_number',
    description: 'Google Cloud project number (JWT audience)',
  },
  { name: 'GOOGLE_CHAT_JWKS_URL', key: 'channels.googlechat.jwks_url', description: 'Google Chat JWKS URL' },
  { name: 'GOOGLE_CHAT_API_URL', key: 'channels.googlechat.api_url', description: 'Google Chat API URL' },
  {
    name: 'GOOGLE_CHAT_SERVICE_ACCOUNT',
    key: 'channels.googlechat.service_account',
    description: 'service-account JSON file for later replies',
  },
  { name: 'DISCORD_BOT_TOKEN', key: 'channels.discord.bot_token', description: 'Discord bot token' },
  {
    name: 'DISCORD_API_URL',
    key: 'channels.discord.api_url',
    description: 'Discord REST API URL (with /v10)',
  },
  {
    name: 'DISCORD_GATEWAY_URL',
    key: 'channels.discord.gateway_url',
    description: 'overrides the Discord Gateway URL',
  },
  {
    name: 'MATRIX_HOMESERVER_URL',
    key: 'channels.matrix.homeserver_url',
    description: 'Matrix homeserver URL',
  },
  {
    name: 'MATRIX_ACCESS_TOKEN',
    key: 'channels.matrix.access_token',
    description: "the bot account's access token",
  },
  {
    name: 'MATRIX_USER_ID',
    key: 'channels.matrix.user_id',
    description: "the bot account's id (@bot:server)",
  },
  {
    name: 'SIGNAL_CLI_URL',
    key: 'channels.signal.cli_url',
    description: 'signal-cli REST API URL (bbernhard/signal-cli-rest-api)',
  },
  {
    name: 'SIGNAL_NUMBER',
    key: 'channels.signal.number',
    description: "the bot account's Signal number (+4915…)",
  },
  {
    name: 'EMAIL_CHANNEL',
    key: 'channels.email',
    description: 'on: mail to EMAIL_FROM from admitted senders becomes turns',
  },
  {
    name: 'EMAIL_POLL_SECONDS',
    key: 'channels.email_poll_seconds',
    description: 'seconds between inbox checks of the email channel without IDLE news (default 60)',
  },
  {
    name: 'EMAIL_REQUIRE_AUTHENTICATION',
    key: 'channels.email_require_authentication',
    description: 'off: take mail whose sender the receiving server did not authenticate (default on)',
  },
  { name: 'EMAIL_IMAP_URL', key: 'email.imap_url', description: "owner's IMAP mailbox URL" },
  { name: 'EMAIL_SMTP_URL', key: 'email.smtp_url', description: "owner's SMTP server URL" },
  { name: 'EMAIL_FROM', key: 'email.from', description: 'sender address (addr or Name <addr>)' },
  {
    name: 'GOOGLE_APPLICATION_CREDENTIALS',
    key: 'google.application_credentials',
    description: 'service account key file (domain-wide delegation)',
  },
  {
    name: 'GOOGLE_IMPERSONATE',
    key: 'google.impersonate',
    description: 'Workspace user the service account acts as',
  },
  { name: 'GOOGLE_API_URL', key: 'google.api_url', description: 'root URL of the Google APIs' },
  {
    name: 'GOOGLE_CLIENT_ID',
    key: 'google.client_id',
    description: 'OAuth client id for steward connect google',
  },
  {
    name: 'GOOGLE_CLIENT_SECRET',
    key: 'google.client_secret',
    description: 'OAuth client secret for steward connect google',
  },
  {
    name: 'HUBSPOT_ACCESS_TOKEN',
    key: 'hubspot.access_token',
    description: "owner's HubSpot private app token",
  },
  { name: 'HUBSPOT_BASE_URL', key: 'hubspot.base_url', description: 'root URL of the HubSpot API' },
  { name: 'CALDAV_URL', key: 'caldav.url', description: "owner's CalDAV server (https://user:pass@host/…)" },
  {
    name: 'GOOGLE_DRIVE_FOLDER_ID',
    key: 'files.drive_folder_id',
    description: 'Drive folder files.sync mirrors',
  },
  {
    name: 'ELEVENLABS_API_KEY',
    key: 'voice.elevenlabs.api_key',
    description: 'ElevenLabs API key (spoken replies)',
  },
  {
    name: 'ELEVENLABS_VOICE_ID',
    key: 'voice.elevenlabs.voice_id',
    description: 'ElevenLabs voice of spoken replies',
  },
  { name: 'ELEVENLABS_API_URL', key: 'voice.elevenlabs.api_url', description: 'ElevenLabs API root' },
  {
    name: 'BRAVE_SEARCH_API_KEY',
    key: 'web.brave.api_key',
    description: 'Brave Search API key (web.search)',
  },
  { name: 'BRAVE_SEARCH_API_URL', key: 'web.brave.api_url', description: 'Brave Search API root' },
  { name: 'SEARXNG_URL', key: 'web.searxng.url', description: 'self-hosted SearXNG for web.search' },
  {
    name: 'STEWARD_WEB_ALLOW_HOSTS',
    key: 'web.allow_hosts',
    description: 'private host:port entries web.fetch may reach (comma-separated)',
  },
  {
    name: 'STEWARD_BACKUP_SCHEDULE',
    key: 'backup.schedule',
    description: 'cron of scheduled backups into <data dir>/backups (e.g. "0 3 * * *")',
  },
  {
    name: 'STEWARD_BACKUP_KEEP',
    key: 'backup.keep',
    description: 'how many backups <data dir>/backups keeps',
  },
  {
    name: 'STEWARD_RECEIPTS',
    key: 'replies.receipts',
    description: 'receipt lines under replies: auto (chat channels, terminal, dashboard) or off',
  },
  {
    name: 'STEWARD_SSRF_ALLOW',
    key: 'security.ssrf_allow',
    description: 'private hosts or CIDR ranges the model may make Steward fetch (comma-separated)',
  },
];

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
