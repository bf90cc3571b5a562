import type { Database } from '../../src/db/index.ts';
import { FilesService } from '../../src/files/index.ts';
import { type IntegrationSettings, Integrations } from '../../src/integrations/index.ts';
import { silentLogger } from '../../src/logging/logger.ts';
import { BUILTIN_SKILLS_DIR } from '../../src/runtime.ts';
import { SkillExecutor } from '../../src/skills/executor/index.ts';
import { builtinHandlers } from '../../src/skills/handlers/index.ts';
import { loadSkillRoots } from '../../src/skills/registry/index.ts';
import { ensureUser } from '../../src/users/index.ts';
import { tempDir } from './temp.ts';

/** Integration settings with nothing connected, a fresh data dir, and `overrides` on top. */
export function integrationSettings(overrides: Partial<IntegrationSettings> = {}): IntegrationSettings {
  return {
    dataDir: tempDir('steward-integrations-'),
    email: {},
    google: {},
    hubspot: {},
    caldav: {},
    host: '127.0.0.1',
    port: 3000,
    ...overrides,
  };
}

/** An executor over the built-in skills with the integrations service, as the runtime wires it. */
export function integrationExecutor(
  database: Database,
  settings: IntegrationSettings,
  options: { breakerThreshold?: number } = {},
) {
  const integrations = new Integrations({ database, config: () => settings, timeoutMs: 5_000 });
  const files = new FilesService({
    database,
    dataDir: settings.dataDir,
    jobs: null,
    settings: () => ({ maxReadBytes: 200_000, maxIndexBytes: 20_000_000 }),
  });
  const executor = new SkillExecutor({
    database,
    skills: () => loadSkillRoots([{ dir: BUILTIN_SKILLS_DIR, source: 'builtin' }]),
    handlers: builtinHandlers(),
    services: { database, integrations, files },
    logger: silentLogger(),
    unavailableDomains: (userId) => integrations.unavailableDomains(userId),
    breaker: options.breakerThreshold ? { failureThreshold: options.breakerThreshold } : undefined,
  });
  const run = async (command: string, userId = 'local', timezone = 'UTC') => {
    const user = await ensureUser(database, userId, { timezone });
    return executor.execute({
      command,
      caller: { kind: 'cli' },
      user: { id: user.id, timezone: user.timezone },
      confirmed: true,
    });
  };
  return { integrations, files, executor, run };
}
