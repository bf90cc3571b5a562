import { expect, it } from 'vitest';
import { describeEachBackend } from '../../../test/support/db.ts';
import { type BreakerChange, CircuitBreakers } from './circuit-breaker.ts';

describeEachBackend('circuit breaker state changes', (getDb) => {
  it('reports each opening once, the trial and the close, and lists states', async () => {
    const changes: BreakerChange[] = [];
    let nowMs = Date.parse('2026-11-22T10:00:00Z');
    const breakers = new CircuitBreakers(
      getDb(),
      { failureThreshold: 3, cooldownMs: 60_000, onStateChange: (change) => changes.push(change) },
      () => new Date(nowMs),
    );
    for (let attempt = 0; attempt < 3; attempt++) await breakers.recordFailure('mail.send', 'SMTP down');
    expect(changes).toEqual([{ skill: 'mail.send', state: 'open', lastError: 'SMTP down' }]);
    expect(await breakers.check('mail.send')).toMatchObject({ allowed: false });
    expect(await breakers.states()).toEqual([{ skill: 'mail.send', state: 'open' }]);

    nowMs += 61_000;
    expect(await breakers.check('mail.send')).toEqual({ allowed: true, trial: true, clean: false });
    await breakers.recordFailure('mail.send', 'still down');
    nowMs += 61_000;
    expect(await breakers.check('mail.send')).toEqual({ allowed: true, trial: true, clean: false });
    await breakers.recordSuccess('mail.send');
    await breakers.recordSuccess('mail.send');
    expect(changes.map((change) => change.state)).toEqual([
      'open',
      'half_open',
      'open',
      'half_open',
      'closed',
    ]);
    expect(await breakers.states()).toEqual([{ skill: 'mail.send', state: 'closed' }]);
  });

  it('says when a success has nothing to reset: no failure on record', async () => {
    const breakers = new CircuitBreakers(getDb(), { failureThreshold: 3, cooldownMs: 60_000 });
    expect(await breakers.check('web.fetch')).toEqual({ allowed: true, trial: false, clean: true });
    await breakers.recordFailure('web.fetch', 'timeout');
    expect(await breakers.check('web.fetch')).toEqual({ allowed: true, trial: false, clean: false });
    await breakers.recordSuccess('web.fetch');
    expect(await breakers.check('web.fetch')).toEqual({ allowed: true, trial: false, clean: true });
  });
});
