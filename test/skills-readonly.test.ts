import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEntities } from '../src/memory/index.ts';
import { BUILTIN_SKILLS_DIR } from '../src/runtime.ts';
import { parseFrontmatter } from '../src/skills/registry/parse-frontmatter.ts';
import { runCli } from './support/cli.ts';
import { backends } from './support/db.ts';
import { startFakeHubspot } from './support/fake-hubspot.ts';

type FakeHubspot = Awaited<ReturnType<typeof startFakeHubspot>>;

import { type FakeImap, startFakeImap } from './support/fake-imap.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { type FakeSite, startFakeSite } from './support/fake-site.ts';
import { FAKE_BRAVE_KEY, type FakeSearch, startFakeBrave } from './support/fake-web-search.ts';
import { startTestSteward, type TestSteward } from './support/steward.ts';

/*
 * Read-only is declared, never guessed from an action's name (issue 24 §2): every built-in
 * page says `readonly: true` or `false`, and every read-only built-in, run against a runtime
 * with fakes behind it, leaves the database and the files as they were.
 */

/** Every built-in skill page (`skills/<domain>/<action>.md`) with its frontmatter. */
function builtinPages(): Array<{ name: string; data: Record<string, unknown> }> {
  return readdirSync(BUILTIN_SKILLS_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((domain) =>
      readdirSync(path.join(BUILTIN_SKILLS_DIR, domain.name))
        .filter((file) => file.endsWith('.md') && file !== 'SKILL.md')
        .map((file) => {
          const parsed = parseFrontmatter(
            readFileSync(path.join(BUILTIN_SKILLS_DIR, domain.name, file), 'utf8'),
          );
          if (parsed.status === 'error') throw new Error(`${domain.name}/${file}: ${parsed.message}`);
          return { name: `${domain.name}.${file.slice(0, -3)}`, data: parsed.data };
        }),
    );
}

describe('read-only declarations', () => {
  it('every built-in skill declares readonly: true or false', () => {
    const pages = builtinPages();
    expect(pages.length).toBeGreaterThan(40);
    const undeclared = pages
      .filter((page) => typeof page.data.readonly !== 'boolean')
      .map((page) => page.name);
    expect(undeclared).toEqual([]);
  });

  it('steward skills list --json shows calendar.free as read-only', async () => {
    const result = await runCli(['skills', 'list', '--json'], { timeoutMs: 120_000 });
    expect(result.code, result.stderr).toBe(0);
    const skills = JSON.parse(result.stdout) as Array<{ name: string; readonly: boolean }>;
    expect(skills.find((skill) => skill.name === 'calendar.free')).toMatchObject({ readonly: true });
    expect(skills.find((skill) => skill.name === 'calendar.create')).toMatchObject({ readonly: false });
  }, 150_000);
});

/**
 * One command per read-only built-in, each finding something the seed put there. A new
 * read-only built-in fails the test until it has a line here.
 */
function readOnlyCommands(seed: Seed): Record<string, string> {
  return {
    'calendar.feed': 'calendar.feed',
    'calendar.free': 'calendar.free --from 2026-03-02 --to 2026-03-03 --duration 30',
    'calendar.get': `calendar.get --id ${seed.eventId}`,
    'calendar.list': 'calendar.list --from 2026-03-02 --to 2026-03-03',
    'crm.contact_get': `crm.contact_get --id ${seed.contactId}`,
    'crm.contacts_search': 'crm.contacts_search --query Ana',
    'crm.deals_search': 'crm.deals_search --query harbour',
    'email.read': `email.read --id ${seed.emailId}`,
    'email.search': 'email.search --from ana',
    'files.list': 'files.list',
    'files.read': 'files.read --path notes/plan.md',
    'files.search': 'files.search --query harbour',
    'files.versions': 'files.versions --path notes/plan.md',
    'memory.related': 'memory.related --entity "Sarah Chen"',
    'memory.search': 'memory.search --query "oat milk"',
    'profile.get': 'profile.get',
    'skills.list': 'skills.list',
    'tasks.get': `tasks.get --id ${seed.taskId}`,
    'tasks.search': 'tasks.search --query report',
    'web.fetch': `web.fetch --url ${seed.siteUrl}/article`,
    'web.search': 'web.search --query "harbour report"',
    'workflows.daily_digest': 'workflows.daily_digest',
  };
}

type Seed = { eventId: string; contactId: string; emailId: string; taskId: string; siteUrl: string };

/**
 * What a read is allowed to write, and why: the call's own log row, the web budget it spends,
 * and when a memory was last recalled (a ranking signal, DESIGN §7). Nothing a user made.
 */
const BOOKKEEPING: Record<string, string[] | 'whole table'> = {
  skill_executions: 'whole table',
  skill_circuit_breakers: 'whole table',
  web_call_days: 'whole table',
  memory_entries: ['accessed_at'],
};

describe('every read-only built-in changes nothing', () => {
  let fake: FakeLlm;
  let imap: FakeImap;
  let hubspot: FakeHubspot;
  let brave: FakeSearch;
  let site: FakeSite;
  let steward: TestSteward;
  beforeAll(async () => {
    fake = await startFakeLlm();
    imap = await startFakeImap({ user: 'me@example.com', password: 'imap-pass-1234' });
    hubspot = await startFakeHubspot({ token: 'pat-na1-readonly-token' });
    brave = await startFakeBrave();
    site = await startFakeSite({
      '/article': {
        type: 'text/html',
        body: '<html><body><article><h1>Harbour</h1><p>The harbour report is due.</p></article></body></html>',
      },
    });
    steward = await startTestSteward(backends()[0]!, fake, {
      extraYaml: [
        `email: { imap_url: "${imap.url}", from: "Me <me@example.com>" }`,
        `hubspot: { access_token: "pat-na1-readonly-token", base_url: "${hubspot.url}" }`,
        'web:',
        `  allow_hosts: ["127.0.0.1:${new URL(site.url).port}"]`,
        `  brave: { api_key: "${FAKE_BRAVE_KEY}", api_url: "${brave.url}/res/v1" }`,
        '',
      ].join('\n'),
    });
  }, 120_000);
  afterAll(async () => {
    await steward?.close();
    await Promise.all([fake, imap, hubspot, brave, site].map((server) => server?.close()));
  });

  const run = async (command: string) => {
    const outcome = await steward.runtime.executor.execute({
      command,
      caller: { kind: 'cli' },
      user: { id: 'local', timezone: 'Europe/Paris' },
      confirmed: true,
    });
    return outcome;
  };
  const idIn = (content: string, pattern: RegExp) => {
    const match = pattern.exec(content);
    if (!match) throw new Error(`no id in:\n${content}`);
    return match[1]!;
  };

  async function seed(): Promise<Seed> {
    const mustRun = async (command: string) => {
      const outcome = await run(command);
      if (outcome.status !== 'ok') throw new Error(`${command}: ${outcome.content}`);
      return outcome.content;
    };
    const task = await mustRun('tasks.create --title "Write the harbour report" --priority high');
    const event = await mustRun(
      'calendar.create --title "Harbour review" --start 2026-03-02T10:00 --end 2026-03-02T11:00',
    );
    const contact = await mustRun(
      'crm.contact_create --email ana@example.com --first-name Ana --last-name Lopez',
    );
    await mustRun('files.write --path notes/plan.md --content "Harbour plan, first draft"');
    await mustRun('files.write --path notes/plan.md --content "Harbour plan, second draft"');
    const memory = await mustRun('memory.save --content "Prefers oat milk in coffee" --category preference');
    await recordEntities(steward.db.database, 'local', {
      memoryId: idIn(memory, /\[(m_[a-z0-9]+)\]/),
      entities: [{ name: 'Sarah Chen', kind: 'person' }],
    });
    await mustRun('profile.update --name "Pat"');
    // The feed's secret URL is made the first time it is asked for; after that, reading it changes nothing.
    await mustRun('calendar.feed');
    // Already read: opening an unread message marks it read in the mailbox, as a mail client
    // does (documented on email.read); Steward's own tables and files stay as they were.
    imap.add(
      'INBOX',
      'From: Ana <ana@example.com>\nTo: me@example.com\nSubject: Dinner\n\nDinner on Friday?',
      {
        flags: ['\\Seen'],
      },
    );
    const emails = await mustRun('email.search --from ana');
    return {
      taskId: idIn(task, /\[(t_[a-z0-9]{8})\]/),
      eventId: idIn(event, /\[([^\]]+)\] Harbour review/),
      contactId: idIn(contact, /\[([^\]]+)\]/),
      emailId: idIn(emails, /\[([^\]]+)\] \d{4}-/),
      siteUrl: site.url,
    };
  }

  /** Every row of every table (bookkeeping columns left out), and every file under the data dir. */
  async function snapshot(): Promise<{ tables: Record<string, string[]>; files: Record<string, string> }> {
    const database = steward.db.database;
    const names = await database.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables
       WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
    );
    const tables: Record<string, string[]> = {};
    for (const { table_name: table } of names) {
      const skip = BOOKKEEPING[table];
      if (skip === 'whole table') continue;
      const rows = await database.query<{ row: Record<string, unknown> }>(
        `SELECT to_jsonb(t) AS row FROM "${table}" t`,
      );
      tables[table] = rows
        .map(({ row }) => {
          const value = typeof row === 'string' ? (JSON.parse(row) as Record<string, unknown>) : { ...row };
          for (const column of skip ?? []) delete value[column];
          return JSON.stringify(value);
        })
        .sort();
    }
    const files: Record<string, string> = {};
    const walk = (dir: string) => {
      if (!existsSync(dir)) return;
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(full);
        else if (entry.isFile() && !full.includes(`${path.sep}logs${path.sep}`))
          files[path.relative(steward.config.dataDir, full)] =
            `${statSync(full).size}:${createHash('sha256').update(readFileSync(full)).digest('hex')}`;
      }
    };
    walk(steward.config.dataDir);
    return { tables, files };
  }

  it('leaves every table and file as it was', async () => {
    const commands = readOnlyCommands(await seed());
    const readOnly = [...steward.runtime.skills.snapshot().skills.values()]
      .filter((skill) => skill.source === 'builtin' && skill.readonly)
      .map((skill) => skill.name)
      .sort();
    expect(Object.keys(commands).sort()).toEqual(readOnly);
    const contactsBefore = JSON.stringify([...hubspot.contacts.values()]);
    const before = await snapshot();
    expect(before.tables.tasks?.length).toBeGreaterThan(0);
    for (const [skill, command] of Object.entries(commands)) {
      const outcome = await run(command);
      expect(outcome.status, `${skill}: ${outcome.content}`).toBe('ok');
      const after = await snapshot();
      expect(after, `${command} changed something`).toEqual(before);
    }
    expect(JSON.stringify([...hubspot.contacts.values()])).toBe(contactsBefore);
  }, 300_000);
});
