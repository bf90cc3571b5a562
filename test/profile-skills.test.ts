import { expect, it } from 'vitest';
import { silentLogger } from '../src/logging/logger.ts';
import { BUILTIN_SKILLS_DIR } from '../src/runtime.ts';
import { SkillExecutor } from '../src/skills/executor/index.ts';
import { builtinHandlers } from '../src/skills/handlers/index.ts';
import { loadSkillRoots } from '../src/skills/registry/index.ts';
import { ensureUser } from '../src/users/index.ts';
import { describeEachBackend } from './support/db.ts';

describeEachBackend('profile skills', (getDb) => {
  const executor = () =>
    new SkillExecutor({
      database: getDb(),
      skills: () => loadSkillRoots([{ dir: BUILTIN_SKILLS_DIR, source: 'builtin' }]),
      handlers: builtinHandlers(),
      services: { database: getDb() },
      logger: silentLogger(),
    });
  const run = async (userId: string, command: string) => {
    const user = await ensureUser(getDb(), userId, { timezone: 'UTC' });
    return executor().execute({
      command,
      caller: { kind: 'cli' },
      user: { id: user.id, timezone: user.timezone },
    });
  };

  it('sets the time zone that dates are read in, for that user only', async () => {
    expect((await run('ana', 'profile.get')).content).toContain('time zone UTC');
    const updated = await run('ana', 'profile.update --timezone Pacific/Auckland --name Ana');
    expect(updated.content).toBe('Updated: User ana (Ana) · time zone Pacific/Auckland');
    expect((await run('ben', 'profile.get')).content).toContain('time zone UTC');
    const [row] = await getDb().query<{ timezone: string }>("SELECT timezone FROM users WHERE id = 'ana'");
    expect(row!.timezone).toBe('Pacific/Auckland');
  });

  it('rejects an unknown zone and an empty update, changing nothing', async () => {
    await run('cara', 'profile.update --timezone Europe/Berlin');
    const bad = await run('cara', 'profile.update --timezone Mars/Olympus');
    expect(bad.status).toBe('error');
    expect(bad.content).toContain('IANA time zone such as Europe/Berlin');
    const empty = await run('cara', 'profile.update');
    expect(empty.status).toBe('error');
    expect(empty.content).toContain('give --timezone, --name or both');
    expect((await run('cara', 'profile.get')).content).toContain('Europe/Berlin');
  });

  it('sets how replies come back (--voice-replies), for that user only, refusing unknown values', async () => {
    const updated = await run('dana', 'profile.update --voice-replies text');
    expect(updated.status).toBe('ok');
    expect(updated.content).toContain('always text replies');
    expect((await run('dana', 'profile.get')).metadata).toMatchObject({ voiceReplies: 'text' });
    expect((await run('eve', 'profile.get')).metadata).toMatchObject({ voiceReplies: 'auto' });
    expect((await run('dana', 'profile.update --voice-replies always-voice')).metadata).toMatchObject({
      voiceReplies: 'voice',
    });
    const bad = await run('dana', 'profile.update --voice-replies sometimes');
    expect(bad.status).toBe('error');
    expect(bad.content).toContain('auto (voice replies to voice notes), text (always text) or voice');
    const [row] = await getDb().query<{ voice_replies: string }>(
      "SELECT voice_replies FROM users WHERE id = 'dana'",
    );
    expect(row!.voice_replies).toBe('voice');
  });
});
