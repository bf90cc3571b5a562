import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llmCheck } from '../src/cli/doctor.ts';
import { loadConfig } from '../src/config/index.ts';
import { openDatabase } from '../src/db/index.ts';
import { runCli } from './support/cli.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { ROLE_MODELS, writeTestConfig } from './support/steward.ts';

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake.close();
});

describe('steward doctor', () => {
  it('reports where settings came from and what works, with fixes, without leaking secrets', async () => {
    const { env } = writeTestConfig(fake.url, '', { memory: true });
    fake.enqueue({
      text: 'OK',
      expect: (request) => {
        expect(request.body).toMatchObject({ model: ROLE_MODELS.orchestrator, max_tokens: 1 });
      },
    });
    const result = await runCli(['doctor'], {
      env: { ...env, STEWARD_API_TOKEN: 'doctor-token-0123456789' },
      timeoutMs: 170_000,
    });
    fake.assertDone();
    expect(result.code, result.stdout).toBe(0);
    expect(result.stdout).toMatch(/data_dir\s+\S+\s+from env \(STEWARD_DATA_DIR\)/);
    expect(result.stdout).toMatch(/llm\.base_url\s+http:\/\/127\.0\.0\.1:\d+\/v1\s+from file/);
    expect(result.stdout).toMatch(
      /ok {3}database: embedded PGlite in \S+, PostgreSQL \d+\.\d+\S*, schema current/,
    );
    expect(result.stdout).toContain(
      `ok   memory search: hybrid (full text + vectors from ${ROLE_MODELS.embeddings})`,
    );
    expect(result.stdout).toContain(
      `ok   llm: openai-compatible at ${fake.url} answered a chat completion with ${ROLE_MODELS.orchestrator}`,
    );
    expect(result.stdout).toContain('Every check passed.');
    expect(result.stdout).not.toContain('doctor-token-0123456789');
    expect(result.stdout).not.toContain('test-key-0123456789');
  }, 180_000);

  it('says how to fix a missing LLM and a missing embeddings model', async () => {
    const { env } = writeTestConfig(fake.url);
    const result = await runCli(['doctor'], {
      env: { STEWARD_DATA_DIR: env.STEWARD_DATA_DIR!, STEWARD_CONFIG: '/dev/null' },
      timeoutMs: 170_000,
    });
    expect(result.stdout).toContain('FAIL llm: no LLM endpoint configured');
    expect(result.stdout).toContain(
      'fix: set OPENROUTER_API_KEY, or LLM_BASE_URL (+ LLM_API_KEY) and LLM_MODEL',
    );
    // No embeddings model is not a failure, and doctor does not also call search hybrid.
    expect(result.stdout).toContain(
      'note memory search: full text only: pgvector is available, but no embeddings model is configured',
    );
    expect(result.stdout).toContain('hint: for hybrid search set LLM_EMBEDDINGS_MODEL');
    expect(result.stdout).not.toContain('hybrid (');
    expect(result.stdout).toMatch(/\d check\(s\) failed: llm; see each fix above\./);
    expect(result.code).toBe(1);
  }, 180_000);

  it('fails the llm check when chat completions are refused, or no chat model is configured', async () => {
    // The check `steward doctor` runs, in this process: the doctor processes above prove how a
    // failed check is printed and that it exits 1.
    const { dir, env } = writeTestConfig(fake.url);
    fake.enqueue({ status: 404, message: 'model not found' });
    const refused = await llmCheck(loadConfig({ env, cwd: dir }));
    fake.assertDone();
    expect(refused).toMatchObject({
      name: 'llm',
      ok: false,
      detail: `a chat completion with ${ROLE_MODELS.orchestrator} at ${fake.url}/chat/completions answered HTTP 404: model not found`,
      fix: expect.stringContaining('check LLM_BASE_URL (it usually ends in /v1)'),
    });

    const noModel = await llmCheck(
      loadConfig({
        env: { STEWARD_DATA_DIR: env.STEWARD_DATA_DIR!, STEWARD_CONFIG: '/dev/null', LLM_BASE_URL: fake.url },
        cwd: dir,
      }),
    );
    expect(noModel).toMatchObject({
      name: 'llm',
      ok: false,
      detail: expect.stringContaining('no chat model is configured'),
      fix: expect.stringContaining('set LLM_MODEL'),
    });
  });

  it('fails with the fix when the database cannot be reached', async () => {
    const result = await runCli(['doctor'], {
      env: {
        DATABASE_URL: 'postgres://nobody:secret-pass-123@127.0.0.1:1/none',
        STEWARD_CONFIG: '/dev/null',
      },
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('FAIL database');
    expect(result.stdout).toContain('fix: check DATABASE_URL');
    expect(result.stdout + result.stderr).not.toContain('secret-pass-123');
  });
});

describe('steward chat --once with memory on', () => {
  it('finishes the compaction its turn queued before the process exits', async () => {
    const { dir, env } = writeTestConfig(fake.url, '', { memory: true });
    fake.respondWith((request) =>
      request.body.model === ROLE_MODELS.compaction
        ? {
            text: JSON.stringify({
              summary: 'The user greeted Steward.',
              topic_changed: false,
              memory: null,
            }),
          }
        : { text: 'Hello there.' },
    );
    try {
      const result = await runCli(['chat', '--once', 'Hello Steward', '--json'], { env });
      expect(result.code).toBe(0);
      const reply = JSON.parse(result.stdout) as { reply: string; conversationId: string };
      expect(reply.reply).toBe('Hello there.');
      const { database, lock } = await openDatabase(loadConfig({ env, cwd: dir }));
      try {
        // The job ran before the process exited: the turn was looked at for memories (the
        // short history fits its budget, so nothing is folded into the summary).
        const rows = await database.query<{ looked_at: boolean; summary_version: number }>(
          'SELECT memory_through_message_id > 0 AS looked_at, summary_version FROM conversations WHERE id = $1',
          [reply.conversationId],
        );
        expect(rows).toEqual([{ looked_at: true, summary_version: 0 }]);
      } finally {
        await database.close();
        lock?.release();
      }
    } finally {
      fake.respondWith(null);
    }
  });
});

describe('steward chat without an LLM', () => {
  it('answers with how to configure one', async () => {
    const { env } = writeTestConfig(fake.url);
    const result = await runCli(['chat', '--once', 'hello?'], {
      env: { STEWARD_DATA_DIR: env.STEWARD_DATA_DIR!, STEWARD_CONFIG: '/dev/null' },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('OPENROUTER_API_KEY');
    expect(result.stdout).toContain('LLM_BASE_URL');
  });
});
