import { type CursorStore, channelCursors } from '../src/channels/cursor-store.ts';
import { EmailAdapter } from '../src/channels/email/email-adapter.ts';
import { SignalAdapter } from '../src/channels/signal/signal-adapter.ts';
import type { GatewayPort } from '../src/channels/types.ts';
import { IMAP_SCHEMES, parseMailUrl, SMTP_SCHEMES } from '../src/integrations/index.ts';
import { silentLogger } from '../src/logging/logger.ts';
import { startFakeImap } from '../test/support/fake-imap.ts';
import { startFakeLlm } from '../test/support/fake-llm.ts';
import { FAKE_SIGNAL_NUMBER, startFakeSignal } from '../test/support/fake-signal.ts';
import { startFakeSmtp } from '../test/support/fake-smtp.ts';
import { ASSISTANT, rawMail } from '../test/support/mail-fixtures.ts';
import { startTestSteward, type TestSteward } from '../test/support/steward.ts';

/* Event-to-acknowledgement figures of the Signal and email channels (used by channels.bench.ts). */

export type AckFigures = { samples: number[]; perSecond: number };
type Counts = { latency: number; burst: number };

const LIMITS = 'limits: { inbound_per_user_per_minute: 0, inbound_per_channel_per_minute: 0 }\n';

/** A figure is only worth printing if every message was really stored. */
export async function expectStored(steward: TestSteward, channel: string, count: number): Promise<void> {
  const [row] = await steward.runtime.database.query<{ count: number }>(
    'SELECT count(*)::int AS count FROM inbound_messages WHERE channel = $1',
    [channel],
  );
  if (row?.count !== count) throw new Error(`${channel}: ${row?.count} messages stored, ${count} expected`);
}

/** The runtime's gateway, telling when `count` messages have been stored through it. */
function countingGateway(steward: TestSteward): GatewayPort & { stored(count: number): Promise<void> } {
  const gateway = steward.runtime.channels;
  let stored = 0;
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  return {
    now: () => gateway.now(),
    receive: async (message) => {
      const result = await gateway.receive(message);
      stored++;
      for (const waiter of waiters.splice(0)) {
        if (waiter.count <= stored) waiter.resolve();
        else waiters.push(waiter);
      }
      return result;
    },
    stored: (count) =>
      count <= stored ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve })),
  };
}

/**
 * Signal (json-rpc mode): an envelope pushed over the fake REST API's WebSocket until it is
 * stored — signal-cli has already acknowledged it to Signal, so storing is Steward's part.
 */
export async function signalAcks(backend: 'pglite' | 'postgres', counts: Counts): Promise<AckFigures> {
  const llm = await startFakeLlm();
  const signal = await startFakeSignal();
  const steward = await startTestSteward(backend, llm, {
    extraYaml: `${LIMITS}channels:\n  allow: ["signal:+15550100001"]\n`,
  });
  const adapter = new SignalAdapter({
    cliUrl: signal.url,
    number: FAKE_SIGNAL_NUMBER,
    logger: silentLogger(),
  });
  const gateway = countingGateway(steward);
  try {
    await adapter.start(gateway);
    while (signal.connections() === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const samples: number[] = [];
    let sent = 0;
    for (let index = 0; index < counts.latency + 5; index++) {
      const started = performance.now();
      signal.message('+15550100001', `message ${index}`);
      await gateway.stored(++sent);
      if (index >= 5) samples.push(performance.now() - started);
    }
    const started = performance.now();
    for (let index = 0; index < counts.burst; index++) signal.message('+15550100001', `burst ${index}`);
    await gateway.stored(sent + counts.burst);
    const perSecond = counts.burst / ((performance.now() - started) / 1000);
    await expectStored(steward, 'signal', counts.latency + 5 + counts.burst);
    return { samples, perSecond };
  } finally {
    await adapter.stop();
    await steward.close();
    await signal.close();
    await llm.close();
  }
}

/** A cursor store that tells when the email channel's `last_uid` has reached a UID. */
function watchedUids(inner: CursorStore): CursorStore & { reached(uid: number): Promise<void> } {
  let saved = 0;
  const waiters: Array<{ uid: number; resolve: () => void }> = [];
  return {
    get: (name) => inner.get(name),
    set: async (name, value) => {
      await inner.set(name, value);
      if (name !== 'last_uid') return;
      saved = Math.max(saved, Number(value));
      for (const waiter of waiters.splice(0)) {
        if (waiter.uid <= saved) waiter.resolve();
        else waiters.push(waiter);
      }
    },
    reached: (uid) =>
      uid <= saved ? Promise.resolve() : new Promise((resolve) => waiters.push({ uid, resolve })),
  };
}

/**
 * Email: a mail appended to the fake IMAP inbox (announced by EXISTS during IDLE) until it is
 * stored and the inbox cursor saved past its UID — what a restart resumes from.
 */
export async function emailAcks(backend: 'pglite' | 'postgres', counts: Counts): Promise<AckFigures> {
  const llm = await startFakeLlm();
  const imap = await startFakeImap({ user: ASSISTANT, password: 'imap-pass-1234' });
  const smtp = await startFakeSmtp({ user: ASSISTANT, password: 'smtp-pass-1234' });
  const steward = await startTestSteward(backend, llm, {
    extraYaml: `${LIMITS}channels:\n  allow: ["email:ana@example.org"]\n`,
  });
  const cursors = watchedUids(channelCursors(steward.runtime.database, 'email'));
  const adapter = new EmailAdapter({
    imap: parseMailUrl(imap.url, IMAP_SCHEMES)!,
    smtp: parseMailUrl(smtp.url, SMTP_SCHEMES)!,
    from: `Steward <${ASSISTANT}>`,
    address: ASSISTANT,
    cursors,
    logger: silentLogger(),
    idleDelayMs: 50,
  });
  const mail = (text: string) => rawMail({ from: 'Ana <ana@example.org>', subject: text, text }).raw;
  try {
    await adapter.start(steward.runtime.channels);
    while (!adapter.watcher?.checks) await new Promise((resolve) => setTimeout(resolve, 10));
    const samples: number[] = [];
    for (let index = 0; index < counts.latency + 5; index++) {
      const started = performance.now();
      await cursors.reached(imap.add('INBOX', mail(`message ${index}`)));
      if (index >= 5) samples.push(performance.now() - started);
    }
    const started = performance.now();
    let last = 0;
    for (let index = 0; index < counts.burst; index++) last = imap.add('INBOX', mail(`burst ${index}`));
    await cursors.reached(last);
    const perSecond = counts.burst / ((performance.now() - started) / 1000);
    await expectStored(steward, 'email', counts.latency + 5 + counts.burst);
    return { samples, perSecond };
  } finally {
    await adapter.stop();
    await steward.close();
    await smtp.close();
    await imap.close();
    await llm.close();
  }
}
