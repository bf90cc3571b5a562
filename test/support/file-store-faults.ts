import { expect, it } from 'vitest';
import type { FileStore, StepHook } from '../../src/files/index.ts';
import { value } from './contracts/file-store-contract.ts';

const text = (content: string) => Buffer.from(content, 'utf8');

/** A scenario: `setup` builds the state, `run` is the operation crashed at each of its steps. */
type Scenario = {
  name: string;
  paths: string[];
  setup(store: FileStore): Promise<void>;
  run(store: FileStore): Promise<unknown>;
};

export const SCENARIOS: Scenario[] = [
  {
    name: 'write (create)',
    paths: ['notes/a.md'],
    setup: async () => {},
    run: (store) => store.write('notes/a.md', text('new')),
  },
  {
    name: 'write (replace)',
    paths: ['notes/a.md'],
    setup: async (store) => {
      value(await store.write('notes/a.md', text('old')));
    },
    run: (store) => store.write('notes/a.md', text('new')),
  },
  {
    name: 'restore',
    paths: ['a.md'],
    setup: async (store) => {
      value(await store.write('a.md', text('first')));
      value(await store.write('a.md', text('second')));
    },
    run: (store) => store.restore('a.md', 1),
  },
  {
    name: 'delete',
    paths: ['a.md'],
    setup: async (store) => {
      value(await store.write('a.md', text('doomed')));
    },
    run: (store) => store.delete('a.md'),
  },
  {
    name: 'move',
    paths: ['a.md', 'dest/a.md'],
    setup: async (store) => {
      value(await store.write('a.md', text('one')));
      value(await store.write('a.md', text('two')));
    },
    run: (store) => store.move('a.md', 'dest/a.md'),
  },
  {
    name: 'move onto an existing file',
    paths: ['a.md', 'b.md'],
    setup: async (store) => {
      value(await store.write('a.md', text('mover')));
      value(await store.write('b.md', text('standing')));
    },
    run: (store) => store.move('a.md', 'b.md'),
  },
];

/** What a user can see of some paths: the current content and every version's content. */
type Snapshot = { current: Record<string, string | null>; versions: Record<string, string[]> };

async function snapshot(store: FileStore, paths: string[]): Promise<Snapshot> {
  const result: Snapshot = { current: {}, versions: {} };
  for (const path of paths) {
    const read = await store.read(path);
    result.current[path] = read.ok ? read.value.toString() : null;
    const versions = await store.versions(path);
    result.versions[path] = [];
    if (!versions.ok) continue;
    for (const version of versions.value) {
      result.versions[path].push(value(await store.readVersion(path, version.version)).toString());
    }
  }
  return result;
}

const allContents = (snap: Snapshot) => new Set(Object.values(snap.versions).flat());

export type FaultHarness = {
  /** A store on fresh, empty storage for one scenario; `reopen` gives a new store over it (a restart). */
  fresh(): Promise<{ store: (hook?: StepHook) => FileStore; pending(): Promise<number> }>;
};

/**
 * Crashes every operation at every one of its steps and checks, before and after recovery,
 * that no version was lost (invariant 1) and that nothing replaced a version that is not in
 * the archive (invariant 2); after recovery the paths are exactly as before or exactly as after.
 */
export function fileStoreFaults(harness: FaultHarness): void {
  for (const scenario of SCENARIOS) {
    it(`${scenario.name}: survives a crash at every step`, async () => {
      // A clean run tells the steps, and what "completed" looks like.
      const clean = await harness.fresh();
      await scenario.setup(clean.store());
      const steps: string[] = [];
      await scenario.run(clean.store(({ step }) => void steps.push(step)));
      const after = await snapshot(clean.store(), scenario.paths);
      expect(steps.length).toBeGreaterThan(2);

      for (let crashAt = 0; crashAt < steps.length; crashAt++) {
        const label = `${scenario.name}, crash before step ${crashAt} (${steps[crashAt]})`;
        const storage = await harness.fresh();
        await scenario.setup(storage.store());
        const before = await snapshot(storage.store(), scenario.paths);
        let seen = 0;
        let crashed = false;
        const crashing: StepHook = () => {
          if (crashed || seen++ === crashAt) {
            crashed = true;
            throw new Error('simulated crash');
          }
        };
        await expect(scenario.run(storage.store(crashing)), label).rejects.toThrow();

        const interrupted = await snapshot(storage.store(), scenario.paths);
        for (const content of allContents(before))
          expect(
            allContents(interrupted).has(content) || Object.values(interrupted.current).includes(content),
            label,
          ).toBe(true);

        await storage.store().recover();
        expect(await storage.pending(), label).toBe(0);
        const recovered = await snapshot(storage.store(), scenario.paths);
        expect([before.current, after.current], label).toContainEqual(recovered.current);
        for (const content of allContents(before))
          expect(allContents(recovered).has(content), label).toBe(true);
        // An archived version never changes: the same number keeps the same content (under the path it travelled to).
        for (const [path, contents] of Object.entries(before.versions)) {
          const archived = before.current[path] === null ? contents : contents.slice(0, -1);
          archived.forEach((content, index) => {
            const kept = Object.values(recovered.versions).some((list) => list[index] === content);
            expect(kept, `${label}: v${index + 1} of ${path} changed`).toBe(true);
          });
        }
        for (const path of scenario.paths) {
          const old = before.current[path];
          if (old === null || old === undefined || recovered.current[path] === old) continue;
          // The path's content changed: its previous content must be one of its versions (or travelled with a move).
          expect(allContents(recovered).has(old), `${label}: ${path} lost "${old}"`).toBe(true);
        }
      }
    });
  }
}
