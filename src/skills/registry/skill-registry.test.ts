import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SkillSnapshot } from '../types.ts';
import { getSkill } from './get-skill.ts';
import { SkillRegistry } from './skill-registry.ts';
import {
  captureLogger,
  removeSkillTree,
  skillFile,
  writeSkillFile,
  writeSkillTree,
} from './write-skill-tree.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempRoot(files: Record<string, string> = {}): string {
  const root = writeSkillTree(files);
  cleanups.push(() => removeSkillTree(root));
  return root;
}

function registryFor(options: ConstructorParameters<typeof SkillRegistry>[0]): SkillRegistry {
  const registry = new SkillRegistry(options);
  cleanups.push(() => registry.close());
  return registry;
}

/** Polls `registry.snapshot()` until `check` holds; the deadline only guards against hanging. */
async function eventually(
  registry: SkillRegistry,
  check: (snapshot: SkillSnapshot) => boolean,
): Promise<SkillSnapshot> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const snapshot = registry.snapshot();
    if (check(snapshot)) return snapshot;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return registry.snapshot();
}

const page = (name: string, description: string) =>
  skillFile(`name: ${name}\ndescription: ${description}`, `# ${name}`);

describe('SkillRegistry', () => {
  it('loads on first use and swaps snapshots whole, leaving old ones untouched', () => {
    const root = tempRoot({ 'email/send.md': page('email.send', 'Send') });
    const registry = registryFor({ roots: [{ dir: root, source: 'user' }] });
    const first = registry.snapshot();
    expect([...first.skills.keys()]).toEqual(['email.send']);
    expect(registry.snapshot()).toBe(first);

    writeSkillFile(root, 'email/read.md', page('email.read', 'Read'));
    const second = registry.load();
    expect(registry.snapshot()).toBe(second);
    expect(second.version).toBe(first.version + 1);
    expect([...second.skills.keys()]).toEqual(['email.read', 'email.send']);
    expect([...first.skills.keys()]).toEqual(['email.send']);
  });

  it('notifies listeners with the new and previous snapshot, until they unsubscribe', () => {
    const root = tempRoot({ 'email/send.md': page('email.send', 'Send') });
    const registry = registryFor({ roots: [{ dir: root, source: 'user' }] });
    const seen: Array<[number, number | null]> = [];
    const unsubscribe = registry.onChange((current, previous) =>
      seen.push([current.version, previous?.version ?? null]),
    );
    registry.load();
    registry.load();
    unsubscribe();
    registry.load();
    expect(seen).toEqual([
      [1, null],
      [2, 1],
    ]);
  });

  it('logs each new error diagnostic once, at warn', () => {
    const root = tempRoot({ 'email/send.md': skillFile('name: email.send') });
    const { logger, records } = captureLogger();
    const registry = registryFor({ roots: [{ dir: root, source: 'user' }], logger });
    registry.load();
    registry.load();
    const warnings = records.filter((record) => record.level === 40);
    expect(warnings).toEqual([
      expect.objectContaining({
        path: path.join(root, 'email/send.md'),
        problem: 'missing required field "description"',
      }),
    ]);
    expect(registry.snapshot().diagnostics).toHaveLength(1);
  });

  it('finds changes by polling when told to (a shared network volume delivers no events)', async () => {
    const user = tempRoot();
    const registry = registryFor({ roots: [{ dir: user, source: 'user' }], pollMs: 100 });
    await registry.watch();
    writeSkillFile(user, 'notes/write.md', page('notes.write', 'Write a note v1'));
    const added = await eventually(registry, (snapshot) => snapshot.skills.has('notes.write'));
    expect(added.skills.get('notes.write')?.description).toBe('Write a note v1');
    writeSkillFile(user, 'notes/write.md', page('notes.write', 'Write a note, version two'));
    const changed = await eventually(
      registry,
      (snapshot) => snapshot.skills.get('notes.write')?.description === 'Write a note, version two',
    );
    expect(changed.skills.get('notes.write')?.description).toBe('Write a note, version two');
  });

  it('makes a new file in a watched user root visible, and drops a removed one', async () => {
    const builtin = tempRoot({ 'email/send.md': page('email.send', 'Built-in send') });
    const user = path.join(tempRoot(), 'not', 'yet', 'created');
    const registry = registryFor({
      roots: [
        { dir: builtin, source: 'builtin' },
        { dir: user, source: 'user' },
      ],
    });
    await registry.watch();
    expect(existsSync(user)).toBe(true);

    writeSkillFile(user, 'notes/write.md', page('notes.write', 'Write a note'));
    const added = await eventually(registry, (snapshot) => snapshot.skills.has('notes.write'));
    expect(added.skills.get('notes.write')?.source).toBe('user');
    expect(getSkill(added, { path: 'notes' }).content).toContain('- notes.write — Write a note');

    writeSkillFile(user, 'email/send.md', page('email.send', 'My send'));
    const overridden = await eventually(
      registry,
      (snapshot) => snapshot.skills.get('email.send')?.source === 'user',
    );
    expect(overridden.skills.get('email.send')?.description).toBe('My send');

    rmSync(path.join(user, 'notes', 'write.md'));
    rmSync(path.join(user, 'email', 'send.md'));
    const removed = await eventually(
      registry,
      (snapshot) =>
        !snapshot.skills.has('notes.write') && snapshot.skills.get('email.send')?.source === 'builtin',
    );
    expect(removed.skills.has('notes.write')).toBe(false);
    expect(removed.domains.has('notes')).toBe(false);
    expect(removed.skills.get('email.send')?.description).toBe('Built-in send');
  });

  it('keeps the old version of a file edited into an invalid state, and reports why', async () => {
    const root = tempRoot({ 'email/send.md': page('email.send', 'Send v1') });
    const registry = registryFor({ roots: [{ dir: root, source: 'user' }] });
    await registry.watch();
    const before = registry.snapshot();

    writeSkillFile(root, 'email/send.md', skillFile('name: email.send\ndescription: Send v2\ntimeout: soon'));
    const after = await eventually(registry, (snapshot) => snapshot.diagnostics.length > 0);
    expect(after.version).toBeGreaterThan(before.version);
    expect(after.skills.get('email.send')?.description).toBe('Send v1');
    expect(after.diagnostics).toEqual([
      {
        path: path.join(root, 'email/send.md'),
        severity: 'error',
        message:
          '"timeout" must be a positive number of seconds, not string "soon" (still using the last valid version)',
      },
    ]);

    writeSkillFile(root, 'email/send.md', page('email.send', 'Send v3'));
    const fixed = await eventually(
      registry,
      (snapshot) => snapshot.skills.get('email.send')?.description === 'Send v3',
    );
    expect(fixed.diagnostics).toEqual([]);
  });

  it('stops reloading after close()', async () => {
    const root = tempRoot();
    const registry = registryFor({ roots: [{ dir: root, source: 'user' }], debounceMs: 10 });
    await registry.watch();
    await registry.close();
    const version = registry.snapshot().version;
    writeSkillFile(root, 'email/send.md', page('email.send', 'Send'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(registry.snapshot().version).toBe(version);
    expect(registry.snapshot().skills.has('email.send')).toBe(false);
  });
});
