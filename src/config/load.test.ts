import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { loadConfig } from './load.ts';
import { OPENROUTER_BASE_URL } from './roster.ts';
import { ConfigStore } from './store.ts';

const tempDir = () => mkdtempSync(path.join(os.tmpdir(), 'steward-config-'));

function expectConfigError(run: () => unknown, key: string): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).key).toBe(key);
    expect((error as ConfigError).message).not.toContain('\n');
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('applies defaults with no file and no environment', () => {
    const cwd = tempDir();
    const config = loadConfig({ env: {}, cwd });
    expect(config.port).toBe(3000);
    expect(config.dataDir).toBe(path.join(cwd, 'data'));
    expect(config.skillsDir).toBe(path.join(cwd, 'data', 'skills'));
    expect(config.endpoint.provider).toBe('none');
    expect(config.roster.roles.orchestrator).toBeUndefined();
    expect(config.configPath).toBeNull();
  });

  it('reads steward.yaml and lets the environment override it, recording sources', () => {
    const cwd = tempDir();
    writeFileSync(path.join(cwd, 'steward.yaml'), 'port: 4100\nlog_level: debug\n');
    const config = loadConfig({ env: { PORT: '4200' }, cwd });
    expect(config.port).toBe(4200);
    expect(config.log_level).toBe('debug');
    expect(config.sources.port).toEqual({ source: 'env', name: 'PORT' });
    expect(config.sources.log_level?.source).toBe('file');
  });

  it('reads replies.receipts from the file or STEWARD_RECEIPTS, and refuses anything but auto or off', () => {
    const cwd = tempDir();
    expect(loadConfig({ env: {}, cwd }).replies.receipts).toBe('auto');
    writeFileSync(path.join(cwd, 'steward.yaml'), 'replies:\n  receipts: off\n');
    expect(loadConfig({ env: {}, cwd }).replies.receipts).toBe('off');
    const fromEnv = loadConfig({ env: { STEWARD_RECEIPTS: 'auto' }, cwd });
    expect(fromEnv.replies.receipts).toBe('auto');
    expect(fromEnv.sources['replies.receipts']).toEqual({ source: 'env', name: 'STEWARD_RECEIPTS' });
    const error = expectConfigError(
      () => loadConfig({ env: { STEWARD_RECEIPTS: 'always' }, cwd }),
      'STEWARD_RECEIPTS',
    );
    expect(error.message).toContain('must be auto or off');
    writeFileSync(path.join(cwd, 'steward.yaml'), 'replies:\n  receipts: yes\n');
    expectConfigError(() => loadConfig({ env: {}, cwd }), 'replies.receipts (steward.yaml)');
  });

  it('OPENROUTER_API_KEY selects OpenRouter with the default roster', () => {
    const config = loadConfig({ env: { OPENROUTER_API_KEY: 'sk-or-test-123456' }, cwd: tempDir() });
    expect(config.endpoint).toEqual({
      provider: 'openrouter',
      baseUrl: OPENROUTER_BASE_URL,
      apiKey: 'sk-or-test-123456',
    });
    expect(config.roster.roles.orchestrator?.model).toBeTruthy();
    expect(config.roster.roles.embeddings?.model).toBeTruthy();
    expect(config.secrets).toContain('sk-or-test-123456');
  });

  it('LLM_BASE_URL + LLM_MODEL configure any OpenAI-compatible server for every chat role', () => {
    const config = loadConfig({
      env: { LLM_BASE_URL: 'http://127.0.0.1:11434/v1', LLM_MODEL: 'llama3.1:8b' },
      cwd: tempDir(),
    });
    expect(config.endpoint.provider).toBe('openai-compatible');
    for (const role of ['orchestrator', 'sub_agent', 'compaction', 'sentinel'] as const) {
      expect(config.roster.roles[role]?.model).toBe('llama3.1:8b');
    }
    expect(config.roster.roles.embeddings).toBeUndefined();
    expect(config.roster.models.get('llama3.1:8b')?.pricing.input).toBe(0);
  });

  it('reads a model roster with tiers, prices and fallbacks from the file', () => {
    const cwd = tempDir();
    writeFileSync(
      path.join(cwd, 'steward.yaml'),
      [
        'llm:',
        '  base_url: http://127.0.0.1:8000/v1',
        '  models:',
        '    - id: big',
        '      tier: primary',
        '      context_window: 200000',
        '      pricing: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }',
        '    - id: small',
        '      tier: cheap',
        '  roles:',
        '    orchestrator: { model: big, fallbacks: [small] }',
      ].join('\n'),
    );
    const config = loadConfig({ env: {}, cwd });
    expect(config.roster.roles.orchestrator).toEqual({ model: 'big', fallbacks: ['small'] });
    expect(config.roster.models.get('big')?.pricing.cache_write).toBe(3.75);
    expect(config.roster.models.get('small')?.tier).toBe('cheap');
  });

  it('names the environment variable of a bad value', () => {
    const error = expectConfigError(() => loadConfig({ env: { PORT: 'abc' }, cwd: tempDir() }), 'PORT');
    expect(error.message).toMatch(/^PORT: /);
  });

  it('names the file key of a bad value', () => {
    const cwd = tempDir();
    writeFileSync(path.join(cwd, 'steward.yaml'), 'limits:\n  turn_max_agents: -1\n');
    const error = expectConfigError(
      () => loadConfig({ env: {}, cwd }),
      'limits.turn_max_agents (steward.yaml)',
    );
    expect(error.message).toMatch(/too small/i);
  });

  it('rejects unknown keys, unparseable YAML and a missing explicit file', () => {
    const cwd = tempDir();
    writeFileSync(path.join(cwd, 'steward.yaml'), 'prot: 3000\n');
    expect(expectConfigError(() => loadConfig({ env: {}, cwd }), 'steward.yaml').message).toContain('"prot"');
    writeFileSync(path.join(cwd, 'steward.yaml'), 'port: [3000\n');
    expectConfigError(() => loadConfig({ env: {}, cwd }), 'steward.yaml');
    expectConfigError(() => loadConfig({ env: { STEWARD_CONFIG: 'missing.yaml' }, cwd }), 'STEWARD_CONFIG');
  });

  it('rejects a DATABASE_URL that is not a postgres URL', () => {
    expectConfigError(
      () => loadConfig({ env: { DATABASE_URL: 'mysql://x' }, cwd: tempDir() }),
      'DATABASE_URL',
    );
  });

  it('collects every secret value, including a database password', () => {
    const config = loadConfig({
      env: {
        STEWARD_API_TOKEN: 'token-token-token-1',
        STEWARD_SECRET_KEY: 'secret-secret-secret',
        DATABASE_URL: 'postgres://me:hunter2-pass@db/steward',
      },
      cwd: tempDir(),
    });
    expect(config.secrets).toEqual(
      expect.arrayContaining(['token-token-token-1', 'secret-secret-secret', 'hunter2-pass']),
    );
  });
});

describe('ConfigStore', () => {
  it('applies a valid change and ignores an invalid one', async () => {
    const cwd = tempDir();
    const file = path.join(cwd, 'steward.yaml');
    writeFileSync(file, 'log_level: info\n');
    const store = new ConfigStore(loadConfig({ env: {}, cwd }), { env: {}, cwd });
    const seen: string[] = [];
    store.onChange((config) => seen.push(config.log_level));
    store.watch();
    try {
      writeFileSync(file, 'log_level: debug\n');
      await expect.poll(() => store.get().log_level, { timeout: 3_000 }).toBe('debug');
      writeFileSync(file, 'log_level: loud\n');
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(store.reload()).toContain('log_level');
      expect(store.get().log_level).toBe('debug');
      expect(seen).toEqual(['debug']);
    } finally {
      store.close();
    }
  });
});
