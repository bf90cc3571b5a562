import { expect, it } from 'vitest';
import { type ContextRow, rankWithContext, termWeight } from './context-ranking.ts';

const row = (key: string, held: number[], extra: Partial<ContextRow> = {}): ContextRow => ({
  key,
  held,
  length: 10,
  speaker: null,
  day: null,
  phrase: false,
  before: [],
  after: [],
  ...extra,
});

const chain = (...rows: ContextRow[]) => {
  // Each row's neighbours in the order given.
  const keys = rows.map((r) => r.key);
  return new Map(
    rows.map((r, index) => [
      r.key,
      {
        ...r,
        before: keys.slice(Math.max(0, index - 2), index).reverse(),
        after: keys.slice(index + 1, index + 3),
      },
    ]),
  );
};

const terms = [
  { lexemes: ['bakeri'], weight: 3 },
  { lexemes: ['long'], weight: 1 },
];
const query = { terms, speakers: new Set<string>(), days: null, averageLength: 10 };

it('finds the answer that shares no word with the question by the turn before it', () => {
  const rows = chain(
    row('chatter', []),
    row('question', [0, 1]),
    row('answer', []),
    row('later', []),
    row('far', []),
  );
  const ranked = rankWithContext(rows, query);
  expect(ranked.map((hit) => hit.key)).toEqual(['question', 'answer', 'chatter', 'later']);
  // Two places away counts less than one; three places away not at all.
  expect(ranked.find((hit) => hit.key === 'later')!.score).toBeLessThan(
    ranked.find((hit) => hit.key === 'chatter')!.score + 1e-9,
  );
});

it('counts a term once, at its nearest: in the text itself beats beside it', () => {
  const rows = chain(row('a', [0]), row('b', [0, 1]));
  const [first, second] = rankWithContext(rows, query);
  expect(first!.key).toBe('b');
  // a holds bakery itself and "long" beside it: 3 + 0.7 × 1.
  expect(second!.score / first!.score).toBeCloseTo((3 + 0.7) / 4, 5);
});

it('ranks what the named speaker said, and what happened on the named days, higher', () => {
  const rows = new Map([
    ['ana', row('ana', [1], { speaker: 'ana', day: '2023-05-08' })],
    ['ben', row('ben', [1], { speaker: 'ben', day: '2023-06-01' })],
  ]);
  expect(rankWithContext(rows, { ...query, speakers: new Set(['ana']) })[0]!.key).toBe('ana');
  expect(rankWithContext(rows, { ...query, speakers: new Set(['ben']) })[0]!.key).toBe('ben');
  const june = { from: '2023-06-01', to: '2023-06-30' };
  expect(rankWithContext(rows, { ...query, days: june })[0]!.key).toBe('ben');
});

it('puts exact-phrase matches first, leaves out what holds nothing, and never shuffles ties', () => {
  const rows = new Map([
    ['x', row('x', [0])],
    ['w', row('w', [0])],
    ['phrase', row('phrase', [1], { phrase: true })],
    ['none', row('none', [])],
  ]);
  expect(rankWithContext(rows, query).map((hit) => hit.key)).toEqual(['phrase', 'w', 'x']);
});

it('weighs a rare term above several common ones', () => {
  expect(termWeight(1000, 1)).toBeGreaterThan(3 * termWeight(1000, 300));
  expect(termWeight(1000, 1000)).toBeLessThan(0.01);
});
