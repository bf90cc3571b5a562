import path from 'node:path';
import { backupAge, listBackups } from '../backup/index.ts';
import { ENV_VARS, pendingRestartCheck, type ResolvedConfig } from '../config/index.ts';
import {
  listMigrations,
  openDatabase,
  pendingMigrations,
  readLockOwner,
  serverVersion,
} from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import { displayPath, QUARANTINE_DIR, quarantinedOperations } from '../files/index.ts';
import { providerChecks, webChecks } from '../integrations/index.ts';
import { redactString } from '../logging/index.ts';
import { otlpSettings } from '../observability/index.ts';
import { systemTimezone } from '../users/index.ts';
import { voiceChecks } from '../voice/index.ts';
import { CliExit, EXIT_ERROR, stewardInvocation } from './common.ts';
import { channelChecks } from './doctor-channels.ts';
import type { Check } from './doctor-check.ts';
import { applySafeFixes } from './doctor-fix.ts';

const SECRET_KEYS = new Set([
  'secret_key',
  'api_token',
  'llm.api_key',
  'database_url',
  'metrics_token',
  'alerts.webhook_url',
  'voice.elevenlabs.api_key',
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
    ['voice.elevenlabs.api_key', config.voice.elevenlabs.api_key],
    ['voice.elevenlabs.voice_id', config.voice.elevenlabs.voice_id],
    ['voice.elevenlabs.api_url', config.voice.elevenlabs.api_url],
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
        vectorCheck(body.vector === true, config),
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
      const pending = await pendingMigrations(database);
      const latest = listMigrations().at(-1)?.name ?? 'none';
      const schema = pending.length
        ? `${pending.length} migration(s) pending (${stewardInvocation()} start or ${stewardInvocation()} migrate applies them)`
        : `schema current (${latest.replace(/\.sql$/, '')})`;
      return [
        { name: 'database', ok: true, detail: `${backend}, PostgreSQL ${version}, ${schema}` },
        vectorCheck(database.hasVector, config),
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

/** Vector support and what memory search therefore is: one statement, never two that disagree. */
function vectorCheck(hasVector: boolean, config: ResolvedConfig): Check {
  const embeddings = config.roster.roles.embeddings;
  if (!hasVector) {
    return {
      name: 'memory search',
      ok: true,
      note: true,
      detail: 'full text only: this PostgreSQL has no vector extension',
      fix: 'for hybrid search install pgvector on the server (CREATE EXTENSION vector), or use the embedded database',
    };
  }
  if (!embeddings) {
    return {
      name: 'memory search',
      ok: true,
      note: true,
      detail: 'full text only: pgvector is available, but no embeddings model is configured',
      fix: 'for hybrid search set LLM_EMBEDDINGS_MODEL (or llm.roles.embeddings in steward.yaml)',
    };
  }
  return {
    name: 'memory search',
    ok: true,
    detail: `hybrid (full text + vectors from ${embeddings.model})`,
  };
}

/** A real one-token chat completion with the orchestrator's model: the call every turn makes. */
export async function llmCheck(config: ResolvedConfig): Promise<Check> {
  const { endpoint } = config;
  if (endpoint.provider === 'none' || !endpoint.baseUrl) {
    return {
      name: 'llm',
      ok: false,
      detail: 'no LLM endpoint configured: chat answers with setup instructions',
      fix: 'set OPENROUTER_API_KEY, or LLM_BASE_URL (+ LLM_API_KEY) and LLM_MODEL',
    };
  }
  const model = config.roster.roles.orchestrator?.model;
  if (!model) {
    return {
      name: 'llm',
      ok: false,
      detail: `${endpoint.baseUrl} is set, but no chat model is configured: every chat would fail`,
      fix: 'set LLM_MODEL (or llm.roles.orchestrator.model in steward.yaml)',
    };
  }
  const url = `${endpoint.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const redacted = (text: string) => redactString(text, config.secrets);
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
      },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Say OK.' }], max_tokens: 1 }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    if (response.ok) {
      return {
        name: 'llm',
        ok: true,
        detail: `${endpoint.provider} at ${endpoint.baseUrl} answered a chat completion with ${model}`,
      };
    }
    let message = text.slice(0, 200);
    try {
      const body = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
      message =
        (typeof body.error === 'string' ? body.error : body.error?.message) ?? body.message ?? message;
    } catch {
      // not JSON: the start of the text says enough
    }
    const fix =
      response.status === 401 || response.status === 403
        ? 'the API key was refused: check OPENROUTER_API_KEY / LLM_API_KEY'
        : response.status === 404
          ? `check LLM_BASE_URL (it usually ends in /v1) and that the model ${model} exists there`
          : response.status === 402
            ? 'the account has no credit left'
            : `check that the model ${model} (LLM_MODEL) is served at LLM_BASE_URL`;
    return {
      name: 'llm',
      ok: false,
      detail: `a chat completion with ${model} at ${url} answered HTTP ${response.status}: ${redacted(message.split('\n')[0] ?? '')}`,
      fix,
    };
  } catch (error) {
    return {
      name: 'llm',
      ok: false,
      detail: `${endpoint.baseUrl} does not answer: ${redacted(errorMessage(error))}`,
      fix: 'check LLM_BASE_URL and that the server is reachable from here',
    };
  }
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

/** The latest backup in `<data dir>/backups`: its age, and whether `backup.schedule` allows it. */
async function backupCheck(config: ResolvedConfig, now = new Date()): Promise<Check> {
  const latest = (await listBackups(config.dataDir))[0] ?? null;
  const age = backupAge(latest, config.backup, systemTimezone(), now);
  return {
    name: 'backup',
    ok: age.ok,
    note: age.ok && age.fix !== undefined,
    detail: age.detail,
    fix: age.fix,
  };
}

/** The vaults: file operations recovery set aside (they need a person), read from the data dir. */
async function filesCheck(config: ResolvedConfig): Promise<Check> {
  const filesDir = path.join(config.dataDir, 'files');
  const records = await quarantinedOperations(filesDir);
  if (records.length === 0)
    return { name: 'files', ok: true, detail: `vaults in ${filesDir}; no file operation set aside` };
  const shown = records
    .slice(0, 3)
    .map((record) => `${record.operation} of "${displayPath(record.path)}" for ${record.userId}`)
    .join('; ');
  return {
    name: 'files',
    ok: false,
    detail: `${records.length} file operation(s) set aside: recovery could neither finish nor undo them (${shown}${records.length > 3 ? '; …' : ''}); every other file works`,
    fix: `nothing was deleted: each record in ${path.join(filesDir, QUARANTINE_DIR)} names the file and what the operation left where (in the vault's .staging folder); put back what you want, then delete the record`,
  };
}

/** The environment variables that are set and that Steward reads (names only, never values). */
function setVariables(env: NodeJS.ProcessEnv): string {
  const names = ENV_VARS.map((variable) => variable.name).filter((name) => env[name]);
  return names.length ? names.join(', ') : '(none)';
}

/**
 * `steward doctor [--fix]`: where each setting came from, and whether each dependency answers
 * (every enabled channel and the owner's configured providers get one harmless call). `--fix`
 * first applies the safe fixes (file modes, missing folders, Steward's own webhook registration).
 */
export async function doctorCommand(config: ResolvedConfig, options: { fix?: boolean } = {}): Promise<void> {
  const out: string[] = ['Settings:', ...settingLines(config)];
  out.push(`  config file: ${config.configPath ?? '(none; steward.yaml is optional)'}`);
  out.push(`  environment variables set: ${setVariables(process.env)}`);
  const fixed = options.fix ? applySafeFixes(config) : [];
  const checks: Check[] = [...(await databaseChecks(config)), await llmCheck(config)];
  checks.push(...(await channelChecks(config, { probe: true, fix: options.fix })));
  checks.push(...(await providerChecks(config)));
  checks.push(tracingCheck(config));
  checks.push(await filesCheck(config));
  checks.push(...(await voiceChecks(config)));
  checks.push(...(await webChecks(config)));
  checks.push(await backupCheck(config));
  const restart = pendingRestartCheck(config.dataDir);
  if (restart) checks.push(restart);
  if (options.fix) {
    out.push('', 'Fixed:');
    out.push(...(fixed.length ? fixed.map((line) => `  ${line}`) : ['  nothing needed a safe fix']));
  }
  out.push('', 'Checks:');
  for (const check of checks) {
    out.push(`  ${check.ok ? (check.note ? 'note' : 'ok  ') : 'FAIL'} ${check.name}: ${check.detail}`);
    if ((!check.ok || check.note) && check.fix) out.push(`       ${check.ok ? 'hint' : 'fix'}: ${check.fix}`);
  }
  const failed = checks.filter((check) => !check.ok);
  out.push(
    '',
    failed.length
      ? `${failed.length} check(s) failed: ${failed.map((check) => check.name).join(', ')}; see each fix above.`
      : 'Every check passed.',
  );
  if (!options.fix && failed.some((check) => check.fixable))
    out.push(`${stewardInvocation()} doctor --fix applies the fixes marked safe.`);
  process.stdout.write(`${out.join('\n')}\n`);
  if (failed.length) throw new CliExit(EXIT_ERROR);
}
