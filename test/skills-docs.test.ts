import { expect, it } from 'vitest';
import { BUILTIN_SKILLS_DIR } from '../src/runtime.ts';
import { builtinHandlers } from '../src/skills/handlers/index.ts';
import { loadSkillRoots, parseFlagsSection } from '../src/skills/registry/index.ts';

const snapshot = loadSkillRoots([{ dir: BUILTIN_SKILLS_DIR, source: 'builtin' }]);
const handlers = builtinHandlers();

it('loads every built-in skill page without a diagnostic, each domain with its own index', () => {
  expect(snapshot.diagnostics).toEqual([]);
  for (const domain of snapshot.domains.values()) expect(domain.generated, domain.domain).toBe(false);
});

it('ships a page only with a working handler, and a handler only with a page', () => {
  // Shipped workflows are template skills: their page is their instructions.
  const pages = [...snapshot.skills.values()]
    .filter((skill) => skill.domain !== 'workflows')
    .map((skill) => skill.handler)
    .sort();
  expect(pages).toEqual([...handlers.keys()].sort());
});

it('documents exactly the flags each handler accepts, marking the required ones', () => {
  for (const handler of handlers.values()) {
    const skill = snapshot.skills.get(handler.name)!;
    expect(skill.usage === handler.name || skill.usage.startsWith(`${handler.name} `), handler.name).toBe(
      true,
    );
    const documented = parseFlagsSection(skill.body).map((flag) => [flag.name, flag.required]);
    const accepted = Object.entries(handler.flags.shape).map(([name, schema]) => [
      name,
      !(schema as { safeParse(value: unknown): { success: boolean } }).safeParse(undefined).success,
    ]);
    expect(documented.sort(), handler.name).toEqual(accepted.sort());
  }
});
