import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.ts';
import { silentLogger } from '../src/logging/logger.ts';
import { createRuntime } from '../src/runtime.ts';
import { type CliResult, freePort, runCli, startServer } from './support/cli.ts';
import { runAsCli } from './support/steward.ts';

function stewardHome() {
  const home = mkdtempSync(path.join(os.tmpdir(), 'steward-files-cli-'));
  const dataDir = path.join(home, 'data');
  const env = { STEWARD_DATA_DIR: dataDir };
  return { home, dataDir, env, run: (command: string) => runCli(['run', command], { env, cwd: home }) };
}

const output = (result: CliResult) => `exit ${result.code}\n${result.stdout}\n${result.stderr}`;

it('steward run works for every files skill without an LLM, and indexes before it exits', async () => {
  const steward = stewardHome();
  const write = await steward.run(
    'files.write --path survey/kelp.md --content "# Kelp forest survey\nUrchins are spreading."',
  );
  expect(write.code, output(write)).toBe(0);
  expect(readFileSync(path.join(steward.dataDir, 'files/local/survey/kelp.md'), 'utf8')).toContain('Urchins');

  // A new process: only the first one's index job can have put the file in the index.
  const search = await steward.run('files.search --query urchins');
  expect(search.code, output(search)).toBe(0);
  expect(search.stdout).toContain('survey/kelp.md');
  expect(search.stdout).toContain('**Urchins**');

  const steps: Array<[string, RegExp]> = [
    ['files.write --path survey/kelp.md --content "revised"', /archived as v1/],
    ['files.read --path survey/kelp.md', /<external source="file:survey\/kelp\.md">\nrevised\n<\/external>/],
    ['files.versions --path survey/kelp.md', /v1 · .*\nv2 · .* · current/],
    ['files.restore --path survey/kelp.md --version 1', /now v3/],
    ['files.delete --path survey/kelp.md', /Archived survey\/kelp\.md as v3/],
  ];
  // The rest in this process, on the same data dir, as `steward run` executes them: it prints the
  // result's content and exits 0 for status ok. The processes above and below prove that path.
  const runtime = await createRuntime(loadConfig({ env: steward.env, cwd: steward.home }), {
    logger: silentLogger(),
  });
  try {
    for (const [command, expected] of steps) {
      const result = await runAsCli(runtime, 'local', command);
      expect(result.status, `${command}\n${result.content}`).toBe('ok');
      expect(result.content, command).toMatch(expected);
    }
  } finally {
    await runtime.close();
  }
  const sync = await steward.run('files.sync');
  expect(sync.code).toBe(1);
  expect(sync.stdout).toMatch(/not connected/);
}, 120_000);

it('a running server indexes a change within seconds, made through Steward or directly in the folder', async () => {
  const steward = stewardHome();
  // Dropped in while no server ran: indexed when one starts.
  mkdirSync(path.join(steward.dataDir, 'files/local/before'), { recursive: true });
  writeFileSync(
    path.join(steward.dataDir, 'files/local/before/start.md'),
    'Seals hauled out on the sandbar.',
  );
  const server = await startServer({
    env: { ...steward.env, PORT: String(await freePort()) },
    cwd: steward.home,
  });
  try {
    const searchUntil = async (query: string, wanted: string) => {
      const started = Date.now();
      let found = '';
      while (Date.now() - started < 30_000) {
        const response = await fetch(`${server.url}/api/run`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ command: `files.search --query ${query}` }),
        });
        found = ((await response.json()) as { content: string }).content;
        if (found.includes(wanted)) break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      return found;
    };
    expect(await searchUntil('sandbar', 'before/start.md')).toContain('before/start.md');
    const write = await steward.run('files.write --path log.md --content "A pod of orcas passed the point."');
    expect(write.code, output(write)).toBe(0);
    expect(await searchUntil('orcas', 'log.md')).toContain('log.md');

    // A file dropped straight into the vault folder is picked up too.
    mkdirSync(path.join(steward.dataDir, 'files/local/sightings'), { recursive: true });
    writeFileSync(
      path.join(steward.dataDir, 'files/local/sightings/whales.md'),
      '# Humpback sighting\nTwo adults.',
    );
    expect(await searchUntil('humpback', 'sightings/whales.md')).toContain('sightings/whales.md');
  } finally {
    await server.stop();
  }
}, 90_000);
