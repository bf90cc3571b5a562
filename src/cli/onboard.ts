import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { createChannelAdapters, probeWithin } from '../channels/index.ts';
import { loadConfig, ROLES } from '../config/index.ts';
import { errorMessage } from '../errors.ts';
import { silentLogger } from '../logging/index.ts';
import { weakSecretReason } from '../security/index.ts';
import { CliExit, EXIT_ERROR, EXIT_OK, EXIT_USAGE, stewardInvocation } from './common.ts';
import { llmCheck } from './doctor.ts';
import { type ServiceKind, writeEnvFile, writeService, writeYamlSettings } from './onboard-files.ts';
import { interactivePrompter, nonInteractivePrompter, type Prompter } from './onboard-prompt.ts';
import { type ChannelSetup, flagOf, ONBOARD_CHANNELS, optionKeyOf } from './onboard-questions.ts';

export type OnboardOptions = Record<string, string | boolean | undefined> & {
  nonInteractive?: boolean;
  llmBaseUrl?: string;
  llmApiKey?: string;
  llmModel?: string;
  ownerToken?: string;
  publicUrl?: string;
  telegramMode?: 'webhook' | 'polling';
  service?: ServiceKind;
};

const OPENROUTER = 'https://openrouter.ai/api/v1';
/** Tries per proof in an interactive run before onboarding gives up. */
const TRIES = 3;

const given = (options: OnboardOptions, key: string) => {
  const value = options[key];
  return typeof value === 'string' ? value : undefined;
};

/** The environment proofs run in: the real one (never `.env`), no config file, with `extra`. */
function proofEnvironment(extra: Record<string, string>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, STEWARD_CONFIG: '/dev/null', ...extra };
  for (const name of ['OPENROUTER_API_KEY', 'STEWARD_PUBLIC_URL', 'TELEGRAM_WEBHOOK_SECRET']) {
    if (!(name in extra)) delete env[name];
  }
  return env;
}

/** Asks for the endpoint, key and model until a one-token chat completion with them succeeds. */
async function llmStep(prompter: Prompter, options: OnboardOptions) {
  prompter.say(
    '\n1. The language model (any OpenAI-compatible endpoint: OpenRouter, OpenAI, Ollama, vLLM, LM Studio)',
  );
  for (let attempt = 1; ; attempt++) {
    const baseUrl = await prompter.ask({
      prompt: '   Endpoint base URL',
      flag: '--llm-base-url',
      given: attempt === 1 ? options.llmBaseUrl : undefined,
      fallback: OPENROUTER,
    });
    const apiKey = await prompter.ask({
      prompt: '   API key (Enter for none, e.g. Ollama)',
      flag: '--llm-api-key',
      given: attempt === 1 ? options.llmApiKey : undefined,
      secret: true,
    });
    const model = await prompter.ask({
      prompt: '   Model (e.g. anthropic/claude-sonnet-4.5, gpt-4.1, llama3.1:8b)',
      flag: '--llm-model',
      given: attempt === 1 ? options.llmModel : undefined,
      required: true,
    });
    const env = { LLM_BASE_URL: baseUrl, LLM_MODEL: model, ...(apiKey ? { LLM_API_KEY: apiKey } : {}) };
    let check: Awaited<ReturnType<typeof llmCheck>>;
    try {
      check = await llmCheck(loadConfig({ env: proofEnvironment(env), cwd: process.cwd() }));
    } catch (error) {
      check = { name: 'llm', ok: false, detail: errorMessage(error), fix: 'check the URL' };
    }
    if (check.ok) {
      prompter.say(`   ✓ ${check.detail}`);
      return { baseUrl, apiKey, model };
    }
    prompter.say(`   ✗ ${check.detail}\n     fix: ${check.fix}`);
    if (!prompter.interactive || attempt >= TRIES)
      throw new CliExit(
        EXIT_ERROR,
        'steward onboard: the LLM endpoint did not answer a one-token chat completion; nothing was written.',
      );
    prompter.say('   Let us try again.');
  }
}

/** The owner token: the one given, the one already in .env, or a new random one. */
async function ownerStep(prompter: Prompter, options: OnboardOptions, existing: string | undefined) {
  prompter.say('\n2. The owner token (STEWARD_API_TOKEN): it unlocks the API, the dashboard and every user');
  if (existing && !options.ownerToken) {
    const keep = await prompter.confirm('   .env already has one. Keep it?', undefined, true);
    if (keep) return existing;
  }
  for (;;) {
    const token = await prompter.ask({
      prompt: '   Owner token (Enter makes a random one)',
      flag: '--owner-token',
      given: options.ownerToken,
      secret: true,
    });
    if (!token) {
      prompter.say('   ✓ made a random 32-character token (kept in .env, not shown)');
      return randomBytes(24).toString('base64url');
    }
    const weak = token.length < 16 ? 'it is shorter than 16 characters' : weakSecretReason(token);
    if (!weak) return token;
    if (!prompter.interactive)
      throw new CliExit(EXIT_USAGE, `steward onboard: --owner-token is too weak: ${weak}`);
    prompter.say(`   That token is too weak: ${weak}.`);
  }
}

/** Asks for one channel's settings and proves them with the channel's own harmless call. */
async function channelStep(
  prompter: Prompter,
  options: OnboardOptions,
  setup: ChannelSetup,
): Promise<Record<string, string> | null> {
  const flagged = setup.fields.some((field) => given(options, optionKeyOf(field.env)) !== undefined);
  if (!(await prompter.confirm(`   Connect ${setup.label}?`, flagged ? true : undefined, false))) return null;
  for (let attempt = 1; ; attempt++) {
    const values: Record<string, string> = {};
    for (const field of setup.fields) {
      const answer = await prompter.ask({
        prompt: `   ${field.prompt}`,
        flag: flagOf(field.env),
        given: attempt === 1 ? given(options, optionKeyOf(field.env)) : undefined,
        secret: field.secret,
        required: !field.optional && !field.generate,
      });
      const value = answer || (field.generate ? randomBytes(18).toString('base64url') : '');
      if (value) values[field.env] = value;
    }
    const problem = await proveChannel(setup, values);
    if (!problem) return values;
    prompter.say(`   ✗ ${problem}`);
    if (!prompter.interactive || attempt >= TRIES)
      throw new CliExit(
        EXIT_ERROR,
        `steward onboard: ${setup.label} did not accept the credentials; nothing was written.`,
      );
  }
}

/** Null when the platform answered the channel's probe with these settings, else what failed. */
async function proveChannel(setup: ChannelSetup, values: Record<string, string>): Promise<string | null> {
  let adapters: Awaited<ReturnType<typeof createChannelAdapters>>['adapters'];
  try {
    ({ adapters } = await createChannelAdapters(
      loadConfig({ env: proofEnvironment(values), cwd: process.cwd() }),
      silentLogger(),
    ));
  } catch (error) {
    return errorMessage(error);
  }
  const adapter = adapters.find((candidate) => candidate.name === setup.channel);
  if (!adapter?.probe) return `${setup.label} is not fully configured by these answers`;
  const result = await probeWithin((signal) => adapter.probe!(signal), 15_000);
  return result.ok ? null : `${result.problem}\n     fix: ${result.fix}`;
}

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/;

function publicUrlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `"${value}" is not a URL`;
  }
  if (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.test(url.hostname))) return null;
  return 'platforms send webhooks only to https:// addresses; put TLS in front (Caddy, a tunnel) and give that address';
}

/** Channels, and whether messages come by webhook (a public URL) or by polling. */
async function channelsStep(prompter: Prompter, options: OnboardOptions) {
  prompter.say('\n3. Chat channels (each is proved with a harmless call before anything is written)');
  const env: Record<string, string> = {};
  let needsUrl = false;
  for (const setup of ONBOARD_CHANNELS) {
    const values = await channelStep(prompter, options, setup);
    if (!values) continue;
    prompter.say(`   ✓ ${setup.label} accepted the credentials`);
    Object.assign(env, values);
    if (setup.delivery === 'webhook') needsUrl = true;
    if (setup.delivery === 'choice') {
      const mode = await prompter.choose(
        '   Receive messages by webhook (needs a public https URL) or by polling (works anywhere)?',
        ['webhook', 'polling'] as const,
        options.telegramMode ?? (options.publicUrl ? 'webhook' : undefined),
        'polling',
      );
      if (mode === 'webhook') {
        needsUrl = true;
        env.TELEGRAM_WEBHOOK_SECRET =
          given(options, 'telegramWebhookSecret') ?? randomBytes(24).toString('base64url');
      }
    }
  }
  let publicUrl: string | undefined;
  if (needsUrl) {
    for (;;) {
      publicUrl = await prompter.ask({
        prompt: '   Public https URL people and platforms reach this server at',
        flag: '--public-url',
        given: publicUrl === undefined ? options.publicUrl : undefined,
        required: true,
      });
      const problem = publicUrlProblem(publicUrl);
      if (!problem) break;
      if (!prompter.interactive) throw new CliExit(EXIT_USAGE, `steward onboard: --public-url: ${problem}`);
      prompter.say(`   ${problem}`);
      publicUrl = '';
    }
  }
  return { env, publicUrl };
}

function readExistingEnv(dir: string): Record<string, string> {
  try {
    return parseEnv(readFileSync(path.join(dir, '.env'), 'utf8')) as Record<string, string>;
  } catch {
    return {};
  }
}

/**
 * `steward onboard`: the LLM (proved by a one-token chat completion), the owner token, each chat
 * channel (proved by its platform), webhook or polling, a service; then `.env` (0600, secrets)
 * and steward.yaml (settings) in the working directory. Nothing is written until every proof passed.
 */
export async function onboardCommand(options: OnboardOptions): Promise<void> {
  const dir = process.cwd();
  const prompter = options.nonInteractive ? nonInteractivePrompter() : interactivePrompter();
  const steward = stewardInvocation();
  try {
    prompter.say(`Setting up Steward in ${dir}. Secrets go to .env (mode 600); settings to steward.yaml.`);
    const llm = await llmStep(prompter, options);
    const existing = readExistingEnv(dir);
    const ownerToken = await ownerStep(prompter, options, existing.STEWARD_API_TOKEN);
    const channels = await channelsStep(prompter, options);
    prompter.say('\n4. Run Steward as a service (starts at login, restarts after a crash)');
    const offered: readonly ServiceKind[] =
      process.platform === 'darwin' ? ['launchd', 'none'] : ['systemd', 'none'];
    const service = await prompter.choose('   Install a service?', offered, options.service, 'none');
    const secrets: Record<string, string> = { STEWARD_API_TOKEN: ownerToken, ...channels.env };
    if (llm.apiKey) secrets.LLM_API_KEY = llm.apiKey;
    const envFile = writeEnvFile(dir, secrets, [
      'LLM_BASE_URL',
      'LLM_MODEL',
      'OPENROUTER_API_KEY',
      'STEWARD_PUBLIC_URL',
    ]);
    const settings: Array<[string[], string]> = [
      [['llm', 'base_url'], llm.baseUrl],
      ...ROLES.filter((role) => role !== 'embeddings').map((role): [string[], string] => [
        ['llm', 'roles', role, 'model'],
        llm.model,
      ]),
    ];
    if (channels.publicUrl) settings.push([['public_url'], channels.publicUrl]);
    const yamlFile = writeYamlSettings(
      path.resolve(dir, process.env.STEWARD_CONFIG ?? 'steward.yaml'),
      settings,
    );
    const lines = [
      '',
      `Wrote ${envFile} (mode 600): ${Object.keys(secrets).join(', ')}`,
      `Wrote ${yamlFile}`,
    ];
    if (service !== 'none') {
      const written = writeService(service, dir);
      lines.push(`Wrote ${written.file}; turn it on with: ${written.enable}`);
    }
    lines.push(
      '',
      'Next:',
      `  ${steward} start        run Steward (dashboard: ${steward} dashboard prints a login link)`,
      `  ${steward} chat         talk to it from this terminal`,
      `  ${steward} doctor       check everything again`,
    );
    prompter.say(lines.join('\n'));
  } finally {
    prompter.close();
  }
  throw new CliExit(EXIT_OK);
}
