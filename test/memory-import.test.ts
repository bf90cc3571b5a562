import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import {
  type HistoryFormat,
  type HistoryMessage,
  importHistory,
  parseHistory,
  searchRecall,
} from '../src/memory/index.ts';
import { ensureUser } from '../src/users/index.ts';
import { type CliResult, freePort, runCli, startServer } from './support/cli.ts';
import { describeEachBackend } from './support/db.ts';

const FIXTURES = fileURLToPath(new URL('./fixtures/history/', import.meta.url));

function parseFixture(file: string, format?: HistoryFormat) {
  const parsed = parseHistory(readFileSync(path.join(FIXTURES, file), 'utf8'), {
    fileName: file,
    format,
    timeZone: 'Europe/Lisbon',
  });
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.history;
}

const brief = (message: HistoryMessage) => ({
  at: message.at.toISOString(),
  speaker: message.speaker,
  role: message.role,
  text: message.text,
  conversation: message.title,
});

it('reads a generic JSONL history, and says which line is wrong', () => {
  const history = parseFixture('history.jsonl');
  expect(history.format).toBe('jsonl');
  expect(history.messages.map(brief)).toEqual([
    {
      at: '2026-02-02T09:15:00.000Z',
      speaker: 'Ana',
      role: 'user',
      text: 'I saw a flat in Porto near the river, two bedrooms.',
      conversation: 'flat-hunt',
    },
    {
      at: '2026-02-02T09:16:30.000Z',
      speaker: 'me',
      role: 'user',
      text: 'How much is the rent?',
      conversation: 'flat-hunt',
    },
    {
      at: '2026-02-02T09:17:10.000Z',
      speaker: 'Ana',
      role: 'user',
      text: '950 euros a month, bills included.',
      conversation: 'flat-hunt',
    },
    {
      at: '2026-01-20T17:00:00.000Z',
      speaker: 'Ben',
      role: 'user',
      text: 'The tomatoes need repotting before March.',
      conversation: 'garden',
    },
  ]);
  expect(history.skipped).toEqual({ 'no text': 1 });
  const bad = parseHistory('{"conversation": "x", "text": "hi", "at": "yesterday-ish"}\n', {
    fileName: 'h.jsonl',
    timeZone: 'UTC',
  });
  expect(bad).toEqual({
    ok: false,
    error: 'h.jsonl line 1: "at" must be a date and time, e.g. "2024-05-08T13:56:00Z".',
  });
  expect(parseHistory('hello there', { fileName: 'notes.txt', timeZone: 'UTC' })).toMatchObject({
    ok: false,
    error: expect.stringMatching(/^notes\.txt: not a history Steward can read\./),
  });
});

it("reads ChatGPT's conversations.json: the thread last shown, user and assistant turns only", () => {
  const history = parseFixture('conversations.json');
  expect(history.format).toBe('chatgpt');
  expect(history.messages.map(brief)).toEqual([
    {
      at: '2024-01-23T08:53:30.500Z',
      speaker: null,
      role: 'user',
      text: 'My sourdough starter smells like nail polish remover. What is wrong?',
      conversation: 'Sourdough starter help',
    },
    {
      at: '2024-01-23T08:53:50.000Z',
      speaker: 'ChatGPT',
      role: 'assistant',
      text: 'That acetone smell means it is hungry: feed it twice a day with equal flour and water.',
      conversation: 'Sourdough starter help',
    },
    {
      at: '2024-01-23T08:58:20.000Z',
      speaker: null,
      role: 'user',
      text: 'Thanks, it is bubbly again.',
      conversation: 'Sourdough starter help',
    },
  ]);
  expect(history.skipped).toEqual({ 'system messages': 1, 'tool messages': 1 });
});

it('reads WhatsApp chats exported on iOS and Android, in the zone they were written in', () => {
  const ios = parseFixture('WhatsApp Chat - Ana Costa.txt');
  expect(ios.format).toBe('whatsapp');
  // Lisbon is on UTC in January.
  expect(ios.messages.map(brief)).toEqual([
    {
      at: '2026-01-12T08:02:40.000Z',
      speaker: 'Ana Costa',
      role: 'user',
      text: 'Are we still on for the climbing gym on Thursday?',
      conversation: 'Ana Costa',
    },
    {
      at: '2026-01-12T08:05:03.000Z',
      speaker: 'Leo',
      role: 'user',
      text: '7pm at Bloc Shop.\nBring the spare chalk bag please'.replace(/^/, 'Yes! '),
      conversation: 'Ana Costa',
    },
    {
      at: '2026-01-13T21:30:00.000Z',
      speaker: 'Ana Costa',
      role: 'user',
      text: 'Booked the belay course for February',
      conversation: 'Ana Costa',
    },
  ]);
  expect(ios.skipped).toEqual({ 'system notices': 1, 'media without text': 1 });

  const android = parseFixture('WhatsApp Chat with Climbing Crew.txt');
  // 1/12/26 with AM/PM: month first, as US phones write.
  expect(
    android.messages.map((message) => [message.at.toISOString(), message.speaker, message.text]),
  ).toEqual([
    ['2026-01-12T08:03:00.000Z', 'Leo', 'Who is in for the Sintra crag on Saturday?'],
    ['2026-01-12T20:10:00.000Z', 'Mia', 'Me! I can drive'],
    ['2026-01-13T09:00:00.000Z', 'Leo', 'Great, leaving at 8am'],
  ]);
  expect(android.messages[0]!.title).toBe('Climbing Crew');
  expect(android.skipped).toEqual({ 'system notices': 2, 'media without text': 1 });
});

it("reads Telegram Desktop's result.json: text messages, formatted text joined, service messages left out", () => {
  const history = parseFixture('result.json');
  expect(history.format).toBe('telegram');
  expect(history.messages.map(brief)).toEqual([
    {
      at: '2026-01-05T10:02:00.000Z',
      speaker: 'Ana Costa',
      role: 'user',
      text: 'The dentist moved my appointment to Tuesday the 13th.',
      conversation: 'Ana Costa',
    },
    {
      at: '2026-01-05T10:03:30.000Z',
      speaker: 'Leo',
      role: 'user',
      text: 'Noted, I will pick you up from Clinica Sorriso at 5.',
      conversation: 'Ana Costa',
    },
  ]);
  expect(history.skipped).toEqual({ 'service messages': 1, 'messages without text': 1 });
});

describeEachBackend('memory import', (getDb) => {
  it('stores each format searchable, adds nothing when imported twice, and keeps users apart', async () => {
    const db = getDb();
    await ensureUser(db, 'importer', { timezone: 'UTC' });
    await ensureUser(db, 'neighbour', { timezone: 'UTC' });
    const files: Array<[string, string]> = [
      ['history.jsonl', 'rent flat Porto'],
      ['conversations.json', 'sourdough starter smell'],
      ['WhatsApp Chat - Ana Costa.txt', 'belay course'],
      ['WhatsApp Chat with Climbing Crew.txt', 'Sintra crag'],
      ['result.json', 'dentist appointment'],
    ];
    for (const [file, query] of files) {
      const history = parseFixture(file);
      const first = await importHistory(db, 'importer', history.format, history.messages);
      expect(first, file).toMatchObject({ added: history.messages.length, duplicates: 0 });
      const again = await importHistory(db, 'importer', history.format, history.messages);
      expect(again, file).toMatchObject({ added: 0, duplicates: history.messages.length });
      const found = await searchRecall(db, 'importer', { query, source: 'messages' });
      expect(found.results.length, `${file}: ${query}`).toBeGreaterThan(0);
      const [top] = found.results;
      expect(top?.kind === 'message' && top.message.channel, file).toBe(`import:${history.format}`);
      // Another user sees none of it, and importing the same file for them adds their own copy.
      expect((await searchRecall(db, 'neighbour', { query, source: 'all' })).results, file).toEqual([]);
    }
    const rent = await searchRecall(db, 'importer', {
      query: 'How much is the rent for the flat?',
      source: 'messages',
    });
    const texts = rent.results.map((hit) => (hit.kind === 'message' ? hit.message.content : ''));
    expect(texts.slice(0, 3)).toContain('950 euros a month, bills included.');
    const jsonl = parseFixture('history.jsonl');
    expect(await importHistory(db, 'neighbour', 'jsonl', jsonl.messages)).toMatchObject({ added: 4 });
    expect((await searchRecall(db, 'neighbour', { query: 'rent', source: 'messages' })).results).not.toEqual(
      [],
    );

    // Imported times are the history's own: the user's latest conversation is not an import.
    const latest = await db.query<{ channel: string; updated_at: Date }>(
      "SELECT channel, updated_at FROM conversations WHERE user_id = 'importer' AND channel = 'import:jsonl' ORDER BY updated_at DESC LIMIT 1",
    );
    expect(new Date(latest[0]!.updated_at).toISOString()).toBe('2026-02-02T09:17:10.000Z');
  });
});

const output = (result: CliResult) => `exit ${result.code}\n${result.stdout}\n${result.stderr}`;

it('steward memory import works on its own and through a running server, with progress and a summary', async () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'steward-import-cli-'));
  const env = { STEWARD_DATA_DIR: path.join(home, 'data'), TZ: 'Europe/Lisbon' };
  const file = path.join(FIXTURES, 'result.json');
  const first = await runCli(['memory', 'import', file], { env, cwd: home });
  expect(first.code, output(first)).toBe(0);
  expect(first.stdout).toBe(
    'Imported telegram history for local: 2 new messages in 1 conversations (0 already there). Left out: 1 service messages, 1 messages without text.\n',
  );
  expect(first.stderr).toContain('steward memory import: 2 of 2 messages');
  const bad = await runCli(['memory', 'import', file, '--format', 'signal'], { env, cwd: home });
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('--format must be one of jsonl, chatgpt, whatsapp, telegram');

  const server = await startServer({ env: { ...env, PORT: String(await freePort()) }, cwd: home });
  try {
    const again = await runCli(['memory', 'import', file, '--json'], { env, cwd: home });
    expect(again.code, output(again)).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      format: 'telegram',
      added: 0,
      duplicates: 2,
      conversations: 1,
    });
    const whatsapp = await runCli(
      ['memory', 'import', path.join(FIXTURES, 'WhatsApp Chat - Ana Costa.txt')],
      {
        env,
        cwd: home,
      },
    );
    expect(whatsapp.code, output(whatsapp)).toBe(0);
    expect(whatsapp.stdout).toMatch(
      /^Imported whatsapp history for local: 3 new messages in 1 conversations/,
    );
    // Searched through the server's API, as a `steward run` process would relay the command.
    const response = await fetch(`${server.url}/api/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ command: 'memory.search --query "belay course" --source messages' }),
    });
    const search = (await response.json()) as { status: string; content: string };
    expect(search.status, search.content).toBe('ok');
    expect(search.content).toMatch(
      /\[message \d+\] 2026-01-13 \d\d:\d\d · "Ana Costa" \(import:whatsapp\) · Ana Costa: Booked the belay course for February/,
    );
  } finally {
    await server.stop();
  }
}, 180_000);
