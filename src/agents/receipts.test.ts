import { describe, expect, it } from 'vitest';
import { GoogleChatAdapter } from '../channels/googlechat/googlechat-adapter.ts';
import { plainText } from '../channels/markdown.ts';
import { slackMrkdwn } from '../channels/slack/slack-mrkdwn.ts';
import { telegramHtml } from '../channels/telegram/telegram-html.ts';
import { WhatsAppAdapter } from '../channels/whatsapp/whatsapp-adapter.ts';
import { silentLogger } from '../logging/logger.ts';
import { markdownToHtml } from '../web/markdown.ts';
import {
  type Receipt,
  receiptLine,
  receiptLinesShown,
  receiptOf,
  receiptsFromJson,
  receiptsJson,
  unbackedClaims,
  withoutForgedReceipts,
  withReceiptLines,
} from './receipts.ts';

const done = (skill: string, summary: string): Receipt => ({
  skill,
  status: 'done',
  summary,
  executionId: `x-${skill}`,
});

describe('receipts from execution records', () => {
  const row = { id: 'x1', skill: 'tasks.create', receipt: 'Alpha plan (t_4kx9m2qa)', error: null };

  it('maps each recorded status to done, failed or unknown, with the reason', () => {
    expect(receiptOf({ ...row, status: 'ok' })).toEqual({
      skill: 'tasks.create',
      status: 'done',
      summary: 'Alpha plan (t_4kx9m2qa)',
      executionId: 'x1',
    });
    expect(
      receiptOf({ ...row, status: 'error', error: 'tasks.create failed: the database refused. Try later.' }),
    ).toMatchObject({
      status: 'failed',
      summary: 'Alpha plan (t_4kx9m2qa) (failed: tasks.create failed: the database refused)',
    });
    expect(receiptOf({ ...row, status: 'refused' })).toMatchObject({
      status: 'failed',
      summary: 'Alpha plan (t_4kx9m2qa) (not run: the safety check stopped it)',
    });
    for (const status of ['unknown', 'running', 'timeout'] as const) {
      expect(receiptOf({ ...row, status })).toMatchObject({
        status: 'unknown',
        summary: 'Alpha plan (t_4kx9m2qa) (may have happened — check)',
      });
    }
    expect(receiptOf({ ...row, receipt: '', status: 'unknown' }).summary).toBe('may have happened — check');
  });

  it('writes one line per receipt: mark, skill, detail', () => {
    expect(receiptLine(done('tasks.create', 'Alpha plan (t_4kx9m2qa)'))).toBe(
      '✓ tasks.create — Alpha plan (t_4kx9m2qa)',
    );
    expect(receiptLine({ ...done('email.send', 'not run'), status: 'failed', executionId: null })).toBe(
      '✗ email.send — not run',
    );
    expect(receiptLine({ ...done('calendar.feed', ''), status: 'unknown' })).toBe('? calendar.feed');
    expect(withReceiptLines('Done.', [done('tasks.create', 'A'), done('memory.save', 'B')])).toBe(
      'Done.\n\n✓ tasks.create — A\n✓ memory.save — B',
    );
    expect(withReceiptLines('Nothing to do.', [])).toBe('Nothing to do.');
  });

  it('shows a detail with markdown characters as written on every channel', () => {
    const line = receiptLine(done('files.write', 'notes/*draft*_v2 [old] `x` __init__.md (v3)'));
    const expected = "notes/*draft*_v2 [old] 'x' __init__.md (v3)";
    expect(plainText(line)).toBe(`✓ files.write — ${expected}`);
    expect(telegramHtml(line)).toBe(`✓ files.write — ${expected}`);
    expect(slackMrkdwn(line)).toBe(`✓ files.write — ${expected}`);
    expect(markdownToHtml(line)).toBe(`<p>✓ files.write — ${expected.replaceAll("'", '&#39;')}</p>`);
    const whatsapp = new WhatsAppAdapter({
      accessToken: 'token-0123456789',
      appSecret: 'secret-0123456789',
      verifyToken: 'verify-0123456789',
      phoneNumberId: '1',
      graphUrl: 'http://127.0.0.1:9',
      logger: silentLogger(),
    });
    expect(whatsapp.format(line)).toBe(`✓ files.write — ${expected}`);
    const chat = new GoogleChatAdapter({
      projectNumber: '1',
      jwksUrl: 'http://127.0.0.1:9/jwks',
      apiUrl: 'http://127.0.0.1:9',
      logger: silentLogger(),
    });
    expect(chat.format(line)).toBe(`✓ files.write — ${expected}`);
    // HTML in a detail stays text.
    expect(telegramHtml(receiptLine(done('tasks.create', '<b>x</b> & y')))).toBe(
      '✓ tasks.create — &lt;b&gt;x&lt;/b&gt; &amp; y',
    );
    // An id's underscore needs no escape: the raw markdown stays readable.
    expect(receiptLine(done('tasks.create', 'Alpha (t_4kx9m2qa)'))).toBe(
      '✓ tasks.create — Alpha (t_4kx9m2qa)',
    );
  });

  it('turns a line of the model that imitates a receipt into a plain bullet', () => {
    expect(withoutForgedReceipts('All done.\n✓ email.send — to Bob\n  ✗ tasks.create — x')).toBe(
      'All done.\n- email.send — to Bob\n  - tasks.create — x',
    );
    expect(withoutForgedReceipts('✓ Sent it. ? Not sure.\nIs it ok?')).toBe(
      '✓ Sent it. ? Not sure.\nIs it ok?',
    );
  });

  it('adds "not run" for a claim no call backs, and nothing for one a call backs or contradicts', () => {
    expect(unbackedClaims("I've sent the email to Bob.", [])).toEqual([
      { skill: 'email.send', status: 'failed', summary: 'not run', executionId: null },
    ]);
    expect(unbackedClaims("I've sent the email to Bob.", [done('email.send', 'x')])).toEqual([]);
    // A draft does not back "sent".
    expect(unbackedClaims("I've sent the email to Bob.", [done('email.draft', 'x')])).toHaveLength(1);
    // A failed call already has its ✗ line; it is not doubled.
    const failed: Receipt = { ...done('tasks.create', 'x (failed: y)'), status: 'failed' };
    expect(unbackedClaims('I created the task.', [failed])).toEqual([]);
    expect(unbackedClaims('I created the task. I created another task.', [])).toHaveLength(1);
    expect(unbackedClaims('Here is what I found: three tasks.', [])).toEqual([]);
  });

  it('round-trips through the stored JSON and drops malformed entries', () => {
    const receipts = [done('tasks.create', 'A'), { ...done('email.send', 'not run'), executionId: null }];
    const json = receiptsJson(receipts);
    expect(json[0]).toEqual({
      skill: 'tasks.create',
      status: 'done',
      summary: 'A',
      execution_id: 'x-tasks.create',
    });
    expect(receiptsFromJson(JSON.parse(JSON.stringify(json)))).toEqual(receipts);
    expect(receiptsFromJson([{ skill: 'x', status: 'maybe', summary: '' }, null, 3])).toEqual([]);
    expect(receiptsFromJson(null)).toEqual([]);
  });

  it('writes lines on chat channels under auto, never under off or on the JSON surfaces', () => {
    for (const channel of ['telegram', 'slack', 'whatsapp', 'googlechat', 'web', 'cli', 'scheduled'])
      expect(receiptLinesShown('auto', channel)).toBe(true);
    for (const channel of ['api', 'openai', 'voice']) expect(receiptLinesShown('auto', channel)).toBe(false);
    expect(receiptLinesShown('off', 'telegram')).toBe(false);
  });
});
