import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../test/support/cli.ts';
import { createTestDatabase } from '../test/support/db.ts';
import { type FakeLlm, startFakeLlm } from '../test/support/fake-llm.ts';
import { writeTestConfig } from '../test/support/steward.ts';
import { baselineVersion, currentVersion, type Version } from './baseline.ts';
import { type Bench, type BenchSection, type Figure, ms, percentile, useBenchDatabase } from './lib.ts';

/*
 * Issues #10 and #22 §6, before and after in one run: `steward start` of the baseline commit and
 * of this tree, each started as its own `npm start` starts it, side by side — start-up to
 * /readyz, the HTTP round trip of a turn with an instant model, resident memory idle and after
 * 70 turns, and a long soak (BENCH_SOAK_TURNS turns, 10,000 by default).
 */

const WARMUP = 10;
const TURNS = 60;
const SOAK_TURNS = Number(process.env.BENCH_SOAK_TURNS || 10_000);
const SOAK_STEP = Math.max(1, Math.floor(SOAK_TURNS / 10));

type Server = { child: ChildProcess; url: string; pid: number; stop(): Promise<void> };

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

/** A copy of `configPath` with the inbound rate limits off (`limits` is not in the file). */
function unlimitedConfig(configPath: string | undefined): Record<string, string> {
  if (!configPath) return {};
  const copy = path.join(mkdtempSync(path.join(os.tmpdir(), 'steward-bench-')), 'steward.yaml');
  writeFileSync(
    copy,
    `${readFileSync(configPath, 'utf8')}\nlimits: { inbound_per_user_per_minute: 0, inbound_per_channel_per_minute: 0 }\n`,
  );
  return { STEWARD_CONFIG: copy };
}

/** The environment, node flags and entry script of a version's `npm start` (its package.json). */
function startCommand(version: Version): { env: Record<string, string>; flags: string[]; entry: string } {
  const pkg = JSON.parse(readFileSync(path.join(version.root, 'package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  const words = pkg.scripts.start.split(/\s+/);
  const node = words.indexOf('node');
  const entry = words.findIndex((word, index) => index > node && word.endsWith('.js'));
  if (node === -1 || entry === -1) throw new Error(`${version.label}: cannot read "${pkg.scripts.start}"`);
  // Assignments before the command (`NAME=value exec node …`) are its environment.
  const env = Object.fromEntries(
    words
      .slice(0, node)
      .filter((word) => /^[A-Z_][A-Z0-9_]*=/.test(word))
      .map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]),
  );
  return { env, flags: words.slice(node + 1, entry), entry: words[entry]! };
}

async function start(
  version: Version,
  env: Record<string, string>,
): Promise<{ server: Server; readyMs: number }> {
  const port = await freePort();
  const started = performance.now();
  const command = startCommand(version);
  // The soak sends far more than a person would: the inbound rate limits are turned off so
  // both versions do the same work.
  const limitsOff = unlimitedConfig(env.STEWARD_CONFIG);
  const child = spawn(version.node, [...command.flags, path.join(version.root, command.entry), 'start'], {
    cwd: version.root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      LOG_LEVEL: 'warn',
      ...command.env,
      ...env,
      ...limitsOff,
      PORT: String(port),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`${version.label}: steward start exited ${child.exitCode}: ${stderr.slice(-500)}`);
    const ready = await fetch(`${url}/readyz`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const readyMs = performance.now() - started;
  const server: Server = {
    child,
    url,
    pid: child.pid!,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
  return { server, readyMs };
}

const chat = async (url: string, text: string) => {
  const response = await fetch(`${url}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text }),
  });
  if (!response.ok) throw new Error(`chat answered ${response.status}`);
  await response.json();
};

type Figures = {
  version: string;
  backend: string;
  startFresh: number;
  startAgain: number;
  idleMb: number;
  turnP50: number;
  turnP99: number;
  afterTurnsMb: number;
};

async function measure(version: Version, backend: 'pglite' | 'postgres', fake: FakeLlm): Promise<Figures> {
  const { env } = writeTestConfig(fake.url);
  const database = backend === 'postgres' ? await createTestDatabase('postgres', { migrate: false }) : null;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'steward-footprint-'));
  const base = { ...env, STEWARD_DATA_DIR: dataDir, ...(database ? { DATABASE_URL: database.url! } : {}) };
  try {
    const first = await start(version, base);
    await first.server.stop();
    const { server, readyMs: startAgain } = await start(version, base);
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const idleMb = rssMb(server.pid);
      for (let index = 0; index < WARMUP; index++) await chat(server.url, `warm up ${index}`);
      const durations: number[] = [];
      for (let index = 0; index < TURNS; index++) {
        const started = performance.now();
        await chat(server.url, `ping ${index}`);
        durations.push(performance.now() - started);
      }
      return {
        version: version.label,
        backend,
        startFresh: first.readyMs,
        startAgain,
        idleMb,
        turnP50: percentile(durations, 50),
        turnP99: percentile(durations, 99),
        afterTurnsMb: rssMb(server.pid),
      };
    } finally {
      await server.stop();
    }
  } finally {
    await database?.drop();
  }
}

async function soak(version: Version, fake: FakeLlm): Promise<number[][]> {
  const { env } = writeTestConfig(fake.url);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'steward-soak-'));
  const { server } = await start(version, { ...env, STEWARD_DATA_DIR: dataDir });
  const samples: number[][] = [[0, rssMb(server.pid)]];
  try {
    for (let turn = 1; turn <= SOAK_TURNS; turn++) {
      await chat(server.url, `soak ${turn}`);
      if (turn % SOAK_STEP === 0) samples.push([turn, rssMb(server.pid)]);
    }
  } finally {
    await server.stop();
  }
  return samples;
}

/** The §6 figures of one version: its PGlite row and its soak. */
function speedFigures(version: Version, row: Figures | undefined, soaked: number[][]): Figure[] {
  const which = version.label === 'now' ? 'now' : 'before';
  const figures: Figure[] = [];
  if (row) {
    figures.push(
      { name: 'turn over HTTP p50, PGlite', version: which, value: ms(row.turnP50) },
      { name: 'restart to ready', version: which, value: ms(row.startAgain) },
      { name: 'RSS after 70 HTTP turns, PGlite', version: which, value: `${row.afterTurnsMb.toFixed(0)} MB` },
    );
  }
  const end = soaked.at(-1);
  if (end)
    figures.push({
      name: 'RSS at the end of the soak, PGlite',
      version: which,
      value: `${end[1]!.toFixed(0)} MB after ${end[0]} turns`,
    });
  return figures;
}

const bench: Bench = async () => {
  const fake = await startFakeLlm();
  fake.respondWith(() => ({ text: 'ok' }));
  const postgres = await useBenchDatabase();
  const versions = [baselineVersion(), currentVersion()].filter(
    (version): version is Version => version !== null,
  );
  const rows: Figures[] = [];
  try {
    for (const backend of postgres ? (['pglite', 'postgres'] as const) : (['pglite'] as const)) {
      for (const version of versions) rows.push(await measure(version, backend, fake));
    }
    const soaks: Array<{ version: Version; samples: number[][] }> = [];
    for (const version of versions) soaks.push({ version, samples: await soak(version, fake) });
    const figures = soaks.flatMap(({ version, samples }) =>
      speedFigures(
        version,
        rows.find((row) => row.version === version.label && row.backend === 'pglite'),
        samples,
      ),
    );
    const soakNotes = soaks.map(({ version, samples }) => {
      const first = samples[1]?.[1] ?? samples[0]![1]!;
      const last = samples.at(-1)![1]!;
      const settled = samples.find(([turns]) => turns! >= SOAK_TURNS / 10) ?? samples[0]!;
      return `${version.label}: from the first sample after turns began to the last ${(((last - first) / first) * 100).toFixed(1)} %; from the sample at a tenth of the run (${settled[0]} turns, once the heap has grown to its working size) to the last ${(((last - settled[1]!) / settled[1]!) * 100).toFixed(1)} % (goal: flat within ±10 %).`;
    });
    const sections: BenchSection[] = [
      {
        title: 'Footprint: start-up, turn round trip and memory, before and after (issues #10, #22)',
        description: `\`steward start\` of the baseline commit and of this tree in one run, each with the node flags of its own \`npm start\`: time to /readyz on a new data dir and on restart, the HTTP round trip of POST /api/chat with an instant fake model (${TURNS} turns after ${WARMUP} warm-up turns), resident memory (VmRSS from /proc) idle 1 s after the restart and after those ${TURNS + WARMUP} turns.`,
        columns: [
          'version',
          'database',
          'start (new)',
          'start (restart)',
          'turn p50',
          'turn p99',
          'RSS idle',
          `RSS after ${TURNS + WARMUP} turns`,
        ],
        rows: rows.map((row) => [
          row.version,
          row.backend,
          ms(row.startFresh),
          ms(row.startAgain),
          ms(row.turnP50),
          ms(row.turnP99),
          `${row.idleMb.toFixed(0)} MB`,
          `${row.afterTurnsMb.toFixed(0)} MB`,
        ]),
        notes: [
          versions.length < 2
            ? 'The baseline checkout could not be prepared, so only this tree is shown.'
            : 'The baseline is checked out with its own dependencies into a temporary directory.',
          'The turns and the memory are measured on the restarted process (the data dir of the first start), as a server runs day to day; a first start also unpacks the database template.',
          'The round trip includes HTTP on loopback both ways and the fake model in the bench process; the engine alone is the "Engine overhead per turn" section.',
          "Goals: RSS ≤ 200 MB after 70 turns on the embedded database (issue #22 §6); start-up ≤ 1.5 s (issue #10). A start is about 1.1 s of CPU: loading the modules (the compile cache skips type stripping and compiling on later starts), PGlite compiling PostgreSQL's WebAssembly and starting it (~0.3 s), pg-boss and the rest.",
          "Resident memory is about 50 MB of the node binary's own pages, the JavaScript heap (~60 MB after turns), PGlite's WebAssembly memory (its buffer pool is sized to the data: 8 MB for a new database) and the C heap (PGlite's and V8's allocations).",
        ],
        figures,
      },
      {
        title: `Memory soak: ${SOAK_TURNS} turns on the embedded database, before and after`,
        description:
          'Resident memory (VmRSS) of `steward start` on PGlite (a new data dir, started as `npm start` starts it), sampled as turns go one after another through POST /api/chat with an instant fake model. BENCH_SOAK_TURNS sets the length (default 10,000).',
        columns: ['turns', ...soaks.map(({ version }) => version.label)],
        rows: soaks[0]!.samples.map(([turns], index) => [
          turns!,
          ...soaks.map(({ samples }) => (samples[index] ? `${samples[index][1]!.toFixed(0)} MB` : '—')),
        ]),
        notes: [...soakNotes, 'Goal (issue #22 §6): ≤ 250 MB at the end of a 10,000-turn soak.'],
      },
    ];
    return sections;
  } finally {
    await fake.close();
  }
};

export default bench;
