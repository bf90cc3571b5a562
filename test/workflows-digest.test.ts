import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { learnedSkillsFor } from '../src/skills/index.ts';
import { backends } from './support/db.ts';
import { type FakeImap, startFakeImap } from './support/fake-imap.ts';
import { type FakeLlm, type FakeRequest, startFakeLlm } from './support/fake-llm.ts';
import { startFakeSmtp } from './support/fake-smtp.ts';
import { ROLE_MODELS, startTestSteward, type TestSteward } from './support/steward.ts';

const shown = (request: FakeRequest) => JSON.stringify(request.body.messages);
const BRIEFING =
  'Email: Bob, Invoice 42. Calendar: 10:00 Standup. Tasks: Pay invoice 42 (due today). Skills to review: garden.old_routine, never used in 90 days: keep, fix or retire it?';
const runCommand = (command: string) => ({ toolCalls: [{ name: 'run', arguments: { command } }] });

let fake: FakeLlm;
let imap: FakeImap;
let smtp: Awaited<ReturnType<typeof startFakeSmtp>>;
beforeAll(async () => {
  [fake, imap, smtp] = await Promise.all([
    startFakeLlm(),
    startFakeImap({ user: 'owner@example.com', password: 'imap-pass-0123' }),
    startFakeSmtp({ user: 'owner@example.com', password: 'smtp-pass-0123' }),
  ]);
});
afterAll(async () => {
  await Promise.all([fake?.close(), imap?.close(), smtp?.close()]);
});

for (const backend of backends()) {
  describe(`the shipped daily digest [${backend}]`, () => {
    let steward: TestSteward;
    beforeAll(async () => {
      steward = await startTestSteward(backend, fake, {
        extraYaml: `email: { imap_url: "${imap.url}", smtp_url: "${smtp.url}" }\n`,
      });
    }, 180_000);
    afterAll(async () => {
      await steward?.close();
    });

    const run = (command: string) =>
      steward.runtime.executor.execute({
        command,
        caller: { kind: 'cli' },
        user: { id: 'local', timezone: 'UTC' },
        channel: 'cli',
        confirmed: true,
      });

    it('is not scheduled until the user sets a schedule', async () => {
      expect(
        steward.runtime.skills.snapshot().skills.get('workflows.daily_digest')?.schedule,
      ).toBeUndefined();
      expect(await steward.runtime.workflows.list()).toEqual([]);
      const scheduled = await run('workflow.build --name daily_digest --schedule "0 7 * * *" --timezone UTC');
      expect(scheduled.status, scheduled.content).toBe('ok');
      steward.runtime.skills.load();
      const [view] = await steward.runtime.workflows.list('local');
      expect(view).toMatchObject({
        name: 'daily_digest',
        schedule: '0 7 * * *',
        timezone: 'UTC',
        last_status: null,
      });
      expect(steward.runtime.skills.snapshot().skills.get('workflows.daily_digest')?.body).toContain(
        'email.search --unread',
      );
    });

    it("reads unread email, today's calendar and due tasks, and delivers a briefing", async () => {
      imap.add(
        'INBOX',
        'From: Bob <bob@example.com>\nTo: owner@example.com\nSubject: Invoice 42\n\nPlease pay by Friday.\n',
      );
      imap.add('INBOX', 'From: Old <old@example.com>\nSubject: Already read\n\nx\n', { flags: ['\\Seen'] });
      const today = new Date().toISOString().slice(0, 10);
      expect(
        (await run(`calendar.create --title "Standup" --start ${today}T10:00 --duration 15`)).status,
      ).toBe('ok');
      expect((await run('tasks.create --title "Pay invoice 42" --due today')).status).toBe('ok');
      // Two learned skills: one untouched for 90 days (listed for review), one fresh (not listed).
      const learned = learnedSkillsFor(steward.runtime.services)!;
      for (const [name, daysAgo] of [
        ['garden.old_routine', 90],
        ['garden.watering', 1],
      ] as const) {
        const written = await learned.write(
          {
            userId: 'local',
            author: 'steward',
            turnId: null,
            at: new Date(Date.now() - daysAgo * 86_400_000),
          },
          {
            name,
            description: `The ${name} routine`,
            body: `## Usage\n\n${name}\n\n## Behavior\n\n1. List the garden tasks with tasks.search --query garden.`,
          },
        );
        expect(written.ok, JSON.stringify(written)).toBe(true);
      }

      fake.enqueue(
        {
          ...runCommand('email.search --unread'),
          expect: (request) => {
            expect(request.body.model).toBe(ROLE_MODELS.sub_agent);
            expect(shown(request)).toContain('Write a short briefing in three parts');
          },
        },
        {
          ...runCommand(`calendar.list --from today --to today`),
          expect: (request) => {
            expect(shown(request)).toContain('Invoice 42');
            expect(shown(request)).not.toContain('Already read');
          },
        },
        {
          ...runCommand('tasks.search --due-before today'),
          expect: (request) => expect(shown(request)).toContain('Standup'),
        },
        {
          ...runCommand('skills.list --review'),
          expect: (request) => expect(shown(request)).toContain('Pay invoice 42'),
        },
        {
          text: BRIEFING,
          expect: (request) => {
            // The curation listing: the learned skill nobody ran for 90 days, and why.
            expect(shown(request)).toContain('Learned skills to review (1)');
            expect(shown(request)).toContain('garden.old_routine (version 1)');
            expect(shown(request)).toContain('never used in 90 days');
            expect(shown(request)).not.toContain('garden.watering');
          },
        },
      );
      const result = await steward.runtime.workflows.runNow('daily_digest');
      fake.assertDone();
      expect(result).toMatchObject({
        run: { status: 'ok', skill: 'workflows.daily_digest', userId: 'local' },
      });
      const notes = await steward.db.database.query<{ content: string }>(
        `SELECT content FROM messages WHERE user_id = 'local' AND role = 'assistant' AND turn_id IS NULL ORDER BY id`,
      );
      expect(notes.at(-1)?.content).toBe(BRIEFING);
      // Reviewing is only listing: the stale skill is still there, unchanged.
      expect(steward.runtime.skills.snapshot().skills.has('garden.old_routine')).toBe(true);
    });
  });
}
