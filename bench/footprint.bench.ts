import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, NODE_FLAGS } from '../test/support/cli.ts';
import { createTestDatabase } from '../test/support/db.ts';
import { type FakeLlm, startFakeLlm } from '../test/support/fake-llm.ts';
import { writeTestConfig } from '../test/support/steward.ts';
import { baselineVersion, currentVersion, type Version } from './baseline.ts';
import { type Bench, type BenchSection, ms, percentile, useBenchDatabase } from './lib.ts';

/*
 * Issue #10 items 1, 3 and 4, before and after in one run: `steward start` of the commit the
 * issue measured and of this tree, side by side — start-up to /readyz, the HTTP round trip of a
 * turn with an instant model, resident memory idle and after turns, and a long soak.
 */

const TURNS = 100;
const WARMUP = 20;
const SOAK_TURNS = Number(process.env.BENCH_SOAK_TURNS ?? 10_000);
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

async function start(
  version: Version,
  env: Record<string, string>,
): Promise<{ server: Server; readyMs: number }> {
  const port = await freePort();
  const started = performance.now();
  // Each version as its own `npm start` runs it.
  const flags = version.label === 'now' ? NODE_FLAGS : [];
  // The soak sends far more than a person would: the inbound rate limits (which the baseline
  // predates) are turned off so both versions do the same work.
  const limitsOff = version.label === 'now' ? unlimitedConfig(env.STEWARD_CONFIG) : {};
  // The current version starts through bin/steward.js, which turns on Node's compile cache.
  const entry = version.label === 'now' ? 'bin/steward.js' : 'src/cli/main.ts';
  const child = spawn(version.node, [...flags, path.join(version.root, entry), 'start'], {
    cwd: version.root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      LOG_LEVEL: 'warn',
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

const bench: Bench = async () => {
  const fake = await startFakeLlm();
  fake.respondWith(() => ({ text: 'ok' }));
  const postgres = await useBenchDatabase();
  const versions = [baselineVersion(), currentVersion()].filter(
    (version): version is Version => version !== null,
  );
  const figures: Figures[] = [];
  try {
    for (const backend of postgres ? (['pglite', 'postgres'] as const) : (['pglite'] as const)) {
      for (const version of versions) figures.push(await measure(version, backend, fake));
    }
    const soaked = await soak(currentVersion(), fake);
    const first = soaked[1]?.[1] ?? soaked[0]![1]!;
    const last = soaked.at(-1)![1]!;
    const settled = soaked.find(([turns]) => turns! >= SOAK_TURNS / 10) ?? soaked[0]!;
    const sections: BenchSection[] = [
      {
        title: 'Footprint: start-up, turn round trip and memory, before and after (issue #10)',
        description: `\`steward start\` of the commit issue #10 measured and of this tree, in one run: time to /readyz on a new data dir and on restart, the HTTP round trip of POST /api/chat with an instant fake model (${TURNS} turns after ${WARMUP}), resident memory (VmRSS) idle 1 s after start and after those turns.`,
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
        rows: figures.map((row) => [
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
          'The round trip includes HTTP on loopback both ways and the fake model in the bench process; the engine alone is the "Engine overhead per turn" section.',
          "Goals (issue #10): start-up ≤ 1.5 s on a new data dir and on restart; RSS idle ≤ 200 MB on the embedded database. A start is about 1.1 s of CPU: loading the modules (the compile cache skips type stripping and compiling on later starts), PGlite compiling PostgreSQL's WebAssembly and starting it (~0.3 s), pg-boss and the rest. A new data dir starts as a copy of the database template built by `npm install`.",
          "Resident memory at idle is about a quarter the node binary's own pages, a quarter the JavaScript heap, the rest PGlite (its WebAssembly memory and code) and native allocations.",
        ],
      },
      {
        title: `Memory soak: ${SOAK_TURNS} turns on the embedded database`,
        description:
          'Resident memory (VmRSS) of `steward start` on PGlite, sampled as turns go through POST /api/chat with an instant fake model.',
        columns: ['turns', 'RSS'],
        rows: soaked.map(([turns, mb]) => [turns!, `${mb!.toFixed(0)} MB`]),
        notes: [
          `From the first sample after turns began to the last: ${(((last - first) / first) * 100).toFixed(1)} % (goal: flat within ±10 %).`,
          `From the sample at a tenth of the run (${settled[0]} turns, once the heap has grown to its working size) to the last: ${(((last - settled[1]!) / settled[1]!) * 100).toFixed(1)} %.`,
          "The JavaScript heap alive after a full collection does not grow (heap snapshots 400 turns apart differ by 0.3 MB; the dashboard keeps a turn's events for 60 s after it ends). Resident memory rises while V8 grows the heap to its working size under back-to-back turns and the C allocator keeps freed buffers, then stays level.",
          'BENCH_SOAK_TURNS sets the length.',
        ],
      },
    ];
    return sections;
  } finally {
    await fake.close();
  }
};

export default bench;
