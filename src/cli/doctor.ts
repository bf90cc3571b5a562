import {
  CHANNEL_NAMES,
  CHANNEL_SETUP,
  channelsPublicUrl,
  createChannelAdapters,
  WEBHOOK_PATHS,
} from '../channels/index.ts';
import { ENV_VARS, type ResolvedConfig } from '../config/index.ts';
import { openDatabase, readLockOwner, serverVersion } from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import { redactString, silentLogger } from '../logging/index.ts';
import { otlpSettings } from '../tracing/index.ts';
import { CliExit, EXIT_ERROR } from './common.ts';

type Check = { name: string; ok: boolean; detail: string; fix?: string };

const SECRET_KEYS = new Set([
  'secret_key',
  'api_token',
  'llm.api_key',
  'database_url',
  'metrics_token',
  'alerts.webhook_url',
]);

function settingLines(config: ResolvedConfig): string[] {
  const values: Array<[string, unknown]> = [
    ['data_dir', config.dataDir],
    ['database_url', config.database_url],
    ['host', config.host],
    ['port', config.port],
    ['log_level', config.log_level],
    ['skills_dir', config.skillsDir],
    ['llm.base_url', config.endpoint.baseUrl],
    ['llm.api_key', config.endpoint.apiKey],
    ['secret_key', config.secret_key],
    ['api_token', config.api_token],
    ['metrics_token', config.metrics_token],
    ['alerts.webhook_url', config.alerts.webhook_url],
    ['alerts.email_to', config.alerts.email_to],
    ['spend.daily_soft_usd', config.spend.daily_soft_usd],
    ['spend.daily_hard_usd', config.spend.daily_hard_usd],
    ['tracing.otlp_endpoint', config.tracing.otlp_traces_endpoint ?? config.tracing.otlp_endpoint],
  ];
  for (const [role, spec] of Object.entries(config.roster.roles)) {
    values.push([`llm.roles.${role}.model`, spec ? [spec.model, ...spec.fallbacks].join(' → ') : undefined]);
  }
  return values.map(([key, value]) => {
    const origin = config.sources[key] ?? config.sources[key.split('.').slice(0, -1).join('.')];
    const from = origin ? `${origin.source} (${origin.name})` : 'default';
    const shown =
      value === undefined || value === null ? '(unset)' : SECRET_KEYS.has(key) ? '(set)' : String(value);
    return `  ${key.padEnd(30)} ${shown.padEnd(40)} from ${from}`;
  });
}

async function databaseChecks(config: ResolvedConfig): Promise<Check[]> {
  const owner = config.database_url ? null : readLockOwner(config.dataDir);
  if (owner) {
    const url = `http://127.0.0.1:${owner.port}/readyz`;
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
      const body = (await response.json()) as { vector?: boolean; reason?: string };
      return [
        {
          name: 'database',
          ok: response.ok,
          detail: `embedded PGlite in ${config.dataDir}, owned by Steward process ${owner.pid} on port ${owner.port}: ${response.ok ? 'ready' : body.reason}`,
          fix: response.ok ? undefined : 'see that server’s log',
        },
        vectorsCheck(config, body.vector === true),
      ];
    } catch (error) {
      return [
        {
          name: 'database',
          ok: false,
          detail: `owned by process ${owner.pid} (port ${owner.port}) which does not answer: ${errorMessage(error)}`,
          fix: `stop process ${owner.pid}, then retry`,
        },
      ];
    }
  }
  try {
    const { database, lock } = await openDatabase(config, { migrate: false });
    try {
      const version = await serverVersion(database);
      const backend =
        database.backend === 'pglite'
          ? `embedded PGlite in ${config.dataDir}/db`
          : 'PostgreSQL server (DATABASE_URL)';
      return [
        { name: 'database', ok: true, detail: `${backend}, PostgreSQL ${version}` },
        vectorsCheck(config, database.hasVector),
      ];
    } finally {
      await database.close();
      lock?.release();
    }
  } catch (error) {
    return [
      {
        name: 'database',
        ok: false,
        detail: redactString(errorMessage(error), config.secrets),
        fix: config.database_url
          ? 'check DATABASE_URL (host, port, user, database) and that the server runs'
          : `check that ${config.dataDir} is writable`,
      },
    ];
  }
}

/** What memory search runs on: hybrid only with pgvector and an embeddings model both. */
function vectorsCheck(config: ResolvedConfig, hasVector: boolean): Check {
  const model = config.roster.roles.embeddings?.model;
  if (!hasVector) {
    return {
      name: 'vectors',
      ok: false,
      detail: 'the vector extension is not installed: memory search uses full text only',
      fix: 'install pgvector on the server (CREATE EXTENSION vector), or use the embedded database',
    };
  }
  if (!model) {
    return {
      name: 'vectors',
      ok: true,
      detail:
        'pgvector available, but no embedding model is configured: memory search uses full text only ' +
        '(set LLM_EMBEDDINGS_MODEL to search by meaning too)',
    };
  }
  return {
    name: 'vectors',
    ok: true,
    detail: `pgvector available and embedding model ${model} configured: memory search is hybrid (full text + vectors)`,
  };
}

async function llmCheck(config: ResolvedConfig): Promise<Check> {
  const { endpoint } = config;
  if (endpoint.provider === 'none' || !endpoint.baseUrl) {
    return {
      name: 'llm',
      ok: false,
      detail: 'no LLM endpoint configured: chat answers with setup instructions',
      fix: 'set OPENROUTER_API_KEY, or LLM_BASE_URL (+ LLM_API_KEY) and LLM_MODEL',
    };
  }
  const url = `${endpoint.baseUrl.replace(/\/+$/, '')}/models`;
  try {
    const response = await fetch(url, {
      headers: endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {},
      signal: AbortSignal.timeout(5_000),
    });
    if (response.ok)
      return { name: 'llm', ok: true, detail: `${endpoint.provider} at ${endpoint.baseUrl} answers` };
    const fix =
      response.status === 401 || response.status === 403
        ? 'the API key was refused: check OPENROUTER_API_KEY / LLM_API_KEY'
        : 'check LLM_BASE_URL';
    return { name: 'llm', ok: false, detail: `${url} answered HTTP ${response.status}`, fix };
  } catch (error) {
    return {
      name: 'llm',
      ok: false,
      detail: `${endpoint.baseUrl} does not answer: ${redactString(errorMessage(error), config.secrets)}`,
      fix: 'check LLM_BASE_URL and that the server is reachable from here',
    };
  }
}

/** One check per channel: off (with what to set), or on with its mode and webhook URL, and every problem. */
export async function channelChecks(config: ResolvedConfig): Promise<Check[]> {
  const { adapters, problems } = await createChannelAdapters(config, silentLogger());
  const publicUrl = channelsPublicUrl(config);
  return CHANNEL_NAMES.map((channel) => {
    const adapter = adapters.find((candidate) => candidate.name === channel);
    const found = problems[channel] ?? [];
    const name = `channel ${channel}`;
    if (!adapter) {
      return found.length
        ? { name, ok: false, detail: `off: ${found.join('; ')}`, fix: CHANNEL_SETUP[channel] }
        : { name, ok: true, detail: `off (to use it, ${CHANNEL_SETUP[channel]})` };
    }
    const mode = adapter.mode ?? 'webhook';
    const where =
      mode === 'polling'
        ? 'long polling'
        : publicUrl
          ? `webhook ${publicUrl}${WEBHOOK_PATHS[channel]} (register it with the platform)`
          : 'webhook; set STEWARD_PUBLIC_URL to see the URL to register';
    return found.length
      ? { name, ok: false, detail: `on, ${where}: ${found.join('; ')}`, fix: 'set what the problem names' }
      : { name, ok: true, detail: `on, ${where}` };
  });
}

/** OTLP export: off, on (where to), or misconfigured (tracing stays off; Steward still runs). */
function tracingCheck(config: ResolvedConfig): Check {
  const { settings, problem } = otlpSettings(config.tracing);
  if (problem) {
    return {
      name: 'tracing',
      ok: false,
      detail: `${problem}; traces are not exported`,
      fix: 'correct the OTEL_EXPORTER_OTLP_* variables (tracing.* in steward.yaml), or unset them',
    };
  }
  if (!settings)
    return { name: 'tracing', ok: true, detail: 'off (set OTEL_EXPORTER_OTLP_ENDPOINT to export traces)' };
  return { name: 'tracing', ok: true, detail: `spans go to ${settings.url} as ${settings.protocol}` };
}

/** `steward doctor`: where each setting came from, and whether each dependency answers. */
export async function doctorCommand(config: ResolvedConfig): Promise<void> {
  const out: string[] = ['Settings:', ...settingLines(config)];
  out.push(`  config file: ${config.configPath ?? '(none; steward.yaml is optional)'}`);
  out.push(`  environment variables read: ${ENV_VARS.map((variable) => variable.name).join(', ')}`);
  const checks = [...(await databaseChecks(config)), await llmCheck(config)];
  const embeddings = config.roster.roles.embeddings;
  checks.push(
    embeddings
      ? { name: 'embeddings', ok: true, detail: `model ${embeddings.model}` }
      : {
          name: 'embeddings',
          ok: false,
          detail: 'no embeddings model: vector memory search is off',
          fix: 'set LLM_EMBEDDINGS_MODEL or llm.roles.embeddings in steward.yaml',
        },
  );
  checks.push(...(await channelChecks(config)));
  checks.push(tracingCheck(config));
  out.push('', 'Checks:');
  for (const check of checks) {
    out.push(`  ${check.ok ? 'ok  ' : 'FAIL'} ${check.name}: ${check.detail}`);
    if (!check.ok && check.fix) out.push(`       fix: ${check.fix}`);
  }
  process.stdout.write(`${out.join('\n')}\n`);
  const fatal = checks.some((check) => check.name === 'database' && !check.ok);
  if (fatal) throw new CliExit(EXIT_ERROR);
}
