import { describe, expect, it } from 'vitest';
import { TurnBudget } from './turn-budget.ts';

const limits = { maxSkillCalls: 3, maxAgents: 2, maxIterations: 4 };

describe('TurnBudget', () => {
  it('allows the turn limit of skill calls, then trips with the turn reason', async () => {
    const budget = new TurnBudget(limits);
    expect([
      await budget.takeSkillCall(),
      await budget.takeSkillCall(),
      await budget.takeSkillCall(),
    ]).toEqual([true, true, true]);
    expect(await budget.takeSkillCall()).toBe(false);
    expect(budget.tripped).toBe('the limit of 3 skill calls for this turn');
  });

  it('reads the conversation allowance once, on the first skill call only', async () => {
    let reads = 0;
    const budget = new TurnBudget({
      ...limits,
      conversationAllowance: async () => {
        reads++;
        return { left: 1, reason: 'the limit of 10 skill calls per 60 minutes in this conversation' };
      },
    });
    expect(budget.takeAgent()).toBe(true);
    expect(reads).toBe(0);
    // Two sub-agents asking at once share the one read and the one call left.
    const taken = await Promise.all([budget.takeSkillCall(), budget.takeSkillCall()]);
    expect(taken.sort()).toEqual([false, true]);
    expect(reads).toBe(1);
    expect(budget.tripped).toBe('the limit of 10 skill calls per 60 minutes in this conversation');
  });

  it('keeps the turn limit when the conversation has more left, and allows none when it has none', async () => {
    const roomy = new TurnBudget({
      ...limits,
      conversationAllowance: async () => ({ left: 50, reason: 'window' }),
    });
    for (let index = 0; index < 3; index++) expect(await roomy.takeSkillCall()).toBe(true);
    expect(await roomy.takeSkillCall()).toBe(false);
    expect(roomy.tripped).toBe('the limit of 3 skill calls for this turn');

    const spent = new TurnBudget({
      ...limits,
      conversationAllowance: async () => ({ left: -2, reason: 'window' }),
    });
    expect(await spent.takeSkillCall()).toBe(false);
    expect(spent.tripped).toBe('window');
  });
});
