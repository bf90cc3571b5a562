import { expect, it } from 'vitest';
import { queryDayRange } from './query-dates.ts';

// A Wednesday.
const NOW = new Date('2026-03-11T10:00:00Z');
const range = (query: string, timeZone = 'UTC') => queryDayRange(query, NOW, timeZone);

it('reads a named day in the ways people write it, and the week before or after it', () => {
  expect(range('Who did Maria have dinner with on May 3, 2023?')).toEqual({
    from: '2023-05-03',
    to: '2023-05-03',
  });
  expect(range('What did Gina find on 1 February, 2023?')).toEqual({ from: '2023-02-01', to: '2023-02-01' });
  expect(range('What book did Tim finish on 8th December, 2023?')).toEqual({
    from: '2023-12-08',
    to: '2023-12-08',
  });
  expect(range('notes from 2024-02-29')).toEqual({ from: '2024-02-29', to: '2024-02-29' });
  expect(range('What did Jolene finish last week before 23 January, 2023?')).toEqual({
    from: '2023-01-16',
    to: '2023-01-23',
  });
  expect(range('the Saturday after October 28, 2023')).toEqual({ from: '2023-10-28', to: '2023-11-04' });
});

it('reads a month of a year and a year', () => {
  expect(range('What did John host for the veterans in May 2023?')).toEqual({
    from: '2023-05-01',
    to: '2023-05-31',
  });
  expect(range('plans for February of 2024')).toEqual({ from: '2024-02-01', to: '2024-02-29' });
  expect(range('Which country did Jolene visit in 2010?')).toEqual({ from: '2010-01-01', to: '2010-12-31' });
});

it('reads times relative to now, in the user’s time zone', () => {
  expect(range('what did I say yesterday')).toEqual({ from: '2026-03-10', to: '2026-03-10' });
  expect(range('the flat we talked about last week')).toEqual({ from: '2026-03-02', to: '2026-03-08' });
  expect(range('this week')).toEqual({ from: '2026-03-09', to: '2026-03-11' });
  expect(range('last month')).toEqual({ from: '2026-02-01', to: '2026-02-28' });
  expect(range('what happened last year')).toEqual({ from: '2025-01-01', to: '2025-12-31' });
  // Two weeks ago is 25 February, give or take half a week.
  expect(range('two weeks ago')).toEqual({ from: '2026-02-21', to: '2026-03-01' });
  // 10:00 UTC is already the next day in Kiribati.
  expect(range('today', 'Pacific/Kiritimati')).toEqual({ from: '2026-03-12', to: '2026-03-12' });
});

it('names no days when the query names none', () => {
  expect(range('coffee preferences')).toBeNull();
  // Which May is meant is a guess.
  expect(range('What did Caroline research in May?')).toBeNull();
  // An impossible day still names its month.
  expect(range('on 30 February, 2023')).toEqual({ from: '2023-02-01', to: '2023-02-28' });
  // A number alone is not a year.
  expect(range('I have 2023 stamps')).toBeNull();
});
