import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './support/cli.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { ROLE_MODELS, writeTestConfig } from './support/steward.ts';

describe('steward schedules run NAME', () => {
  let fake: FakeLlm;
  beforeAll(async () => {
    fake = await startFakeLlm();
  });
  afterAll(() => fake.close());

  it("prints the run's output and where it was delivered, not only its status", async () => {
    const { env } = writeTestConfig(fake.url);
    const skillsDir = mkdtempSync(path.join(os.tmpdir(), 'steward-run-now-'));
    mkdirSync(path.join(skillsDir, 'workflows'));
    writeFileSync(
      path.join(skillsDir, 'workflows', 'morning_note.md'),
      '---\nname: workflows.morning_note\ndescription: A note each morning\n---\n\nSay good morning.\n',
    );
    fake.respondWith((request) => {
      if (request.body.model !== ROLE_MODELS.sub_agent)
        throw new Error(`unexpected ${request.body.model} request`);
      return { text: 'Good morning: three tasks are due today.' };
    });
    const result = await runCli(['schedules', 'run', 'morning_note'], {
      env: { ...env, STEWARD_SKILLS_DIR: skillsDir },
      timeoutMs: 120_000,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('workflows.morning_note (local): ok');
    expect(result.stdout).toContain('Good morning: three tasks are due today.');
    // The owner has no chat channel here: the output went into their scheduled conversation.
    expect(result.stdout).toMatch(/delivered in the conversation/);
  }, 150_000);
});
