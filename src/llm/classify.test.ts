import { describe, expect, it } from 'vitest';
import { classifyStatus, parseRetryAfter } from './classify.ts';
import { backoffDelayMs } from './retry.ts';

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-06-01T12:00:00Z');

  it('reads delta-seconds, an HTTP date and retry-after-ms', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after': '30' }), now)).toBe(30);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Sun, 01 Jun 2025 12:00:45 GMT' }), now)).toBe(45);
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '1500', 'retry-after': '9' }), now)).toBe(1.5);
  });

  it('is null when absent or unreadable, and never negative', () => {
    expect(parseRetryAfter(new Headers(), now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }), now)).toBeNull();
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Sun, 01 Jun 2025 11:00:00 GMT' }), now)).toBe(0);
  });
});

describe('classifyStatus', () => {
  it.each([
    [401, '', 'auth'],
    [403, '', 'auth'],
    [402, '', 'credits'],
    [429, '', 'rate_limit'],
    [408, '', 'timeout'],
    [400, "This model's maximum context length is 128000 tokens", 'context_length'],
    [400, 'prompt is too long: 210000 tokens > 200000 maximum', 'context_length'],
    [413, 'Request Entity Too Large', 'context_length'],
    [400, 'Invalid value for tool_choice', 'bad_request'],
    [404, 'No endpoints found', 'bad_request'],
    [422, 'Unprocessable', 'bad_request'],
    [500, '', 'provider_down'],
    [529, 'Overloaded', 'provider_down'],
  ] as const)('HTTP %i %s → %s', (status, message, errorClass) => {
    expect(classifyStatus(status, message)).toBe(errorClass);
  });
});

describe('backoffDelayMs', () => {
  it('grows exponentially up to the cap, jittered by random()', () => {
    expect([0, 1, 2, 3].map((attempt) => backoffDelayMs(attempt, null, () => 0.5))).toEqual([
      250, 500, 1000, 2000,
    ]);
    expect(backoffDelayMs(10, null, () => 0.999_999)).toBeLessThan(20_000);
    expect(backoffDelayMs(10, null, () => 0.999_999)).toBeGreaterThan(19_000);
    expect(backoffDelayMs(3, null, () => 0)).toBe(0);
  });

  it('waits at least Retry-After, but at most a minute for it', () => {
    expect(backoffDelayMs(0, 5, () => 0)).toBe(5_000);
    expect(backoffDelayMs(0, 0.2, () => 0.999)).toBe(499);
    expect(backoffDelayMs(0, 3600, () => 0)).toBe(60_000);
  });
});
