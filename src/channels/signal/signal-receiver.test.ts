import { afterEach, expect, it } from 'vitest';
import { FAKE_SIGNAL_NUMBER, type FakeSignal, startFakeSignal } from '../../../test/support/fake-signal.ts';
import { silentLogger } from '../../logging/logger.ts';
import { SignalClient } from './signal-client.ts';
import { SignalReceiver } from './signal-receiver.ts';

let signal: FakeSignal | null = null;
let receiver: SignalReceiver | null = null;
afterEach(async () => {
  await receiver?.stop();
  await signal?.close();
});

for (const mode of ['json-rpc', 'normal'] as const) {
  it(`[${mode}] holds what it could not store and stores it, in arrival order, once the database answers`, async () => {
    signal = await startFakeSignal({ mode });
    const stored: string[] = [];
    let failures = 2;
    receiver = new SignalReceiver({
      client: new SignalClient({ cliUrl: signal.url }),
      number: FAKE_SIGNAL_NUMBER,
      logger: silentLogger(),
      pollSeconds: 1,
      handle: async (item) => {
        if (failures-- > 0) throw new Error('the database is down');
        stored.push(
          String((item as { envelope: { dataMessage: { message: string } } }).envelope.dataMessage.message),
        );
      },
    });
    receiver.start();
    await expect.poll(() => receiver!.mode).toBe(mode);
    for (const text of ['one', 'two', 'three']) signal.message('+15550100001', text);
    await expect.poll(() => stored, { timeout: 15_000 }).toEqual(['one', 'two', 'three']);
    expect(receiver.pending).toBe(0);
  });
}
