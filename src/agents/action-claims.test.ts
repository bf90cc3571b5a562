import { describe, expect, it } from 'vitest';
import { claimedActions } from './action-claims.ts';

const skills = (text: string) => claimedActions(text).map((claim) => claim.notRunSkill);

describe('claimedActions', () => {
  it('reads first-person claims with the verb naming the domain', () => {
    expect(claimedActions("I've sent the report to Bob.")).toEqual([
      { verb: 'sent', backedBy: ['email.send', 'email.reply'], notRunSkill: 'email.send' },
    ]);
    expect(skills('I sent it to Anna an hour ago.')).toEqual(['email.send']);
    expect(skills('I have just forwarded the invoice.')).toEqual(['email.send']);
    expect(skills('I’ve drafted a reply for you to review.')).toEqual(['email.draft']);
  });

  it('needs a noun for verbs that could mean anything, and takes the nearest one', () => {
    expect(claimedActions('I created the task "Alpha plan".')).toEqual([
      { verb: 'created', backedBy: ['tasks.*'], notRunSkill: 'tasks.create' },
    ]);
    expect(skills("I've added the meeting to your calendar.")).toEqual(['calendar.create']);
    expect(skills('I added a reminder in your calendar.')).toEqual(['tasks.create']);
    expect(skills('I deleted the old file.')).toEqual(['files.delete']);
    expect(skills('I marked the task as done.')).toEqual(['tasks.update']);
    expect(skills('I created it.')).toEqual([]);
    expect(skills('I have updated everything.')).toEqual([]);
  });

  it('reads the perfect passive', () => {
    expect(skills('Your email has been sent.')).toEqual(['email.send']);
    expect(skills('The tasks have been created.')).toEqual(['tasks.create']);
    expect(skills('The meeting has now been scheduled for Monday.')).toEqual(['calendar.create']);
  });

  it('takes a verb without a noun as any of its domains where it has a default', () => {
    const [scheduled] = claimedActions("I've scheduled it for Friday.");
    expect(scheduled).toMatchObject({ notRunSkill: 'calendar.create' });
    expect(scheduled!.backedBy).toEqual(['calendar.*', 'tasks.*', 'workflow.*']);
    expect(skills('I saved that.')).toEqual(['memory.save']);
  });

  it('ignores negations, plans, offers, questions, quotes and code', () => {
    expect(skills('I have not sent the email yet.')).toEqual([]);
    expect(skills("I haven't created the task.")).toEqual([]);
    expect(skills("I couldn't send it: the mailbox refused.")).toEqual([]);
    expect(skills("I'll send it once you confirm.")).toEqual([]);
    expect(skills('Shall I send the email now?')).toEqual([]);
    expect(skills('Have I sent it already?')).toEqual([]);
    expect(skills('The email has not been sent.')).toEqual([]);
    expect(skills('> I sent the report yesterday, Bob wrote.')).toEqual([]);
    expect(skills('```\nI sent the file\n```')).toEqual([]);
    expect(skills('Run `I sent` to see it.')).toEqual([]);
    expect(skills('It is not done yet: the agent was interrupted.')).toEqual([]);
    expect(skills('The email was sent by Bob on Monday.')).toEqual([]);
  });

  it('finds every claim of a reply, one per statement', () => {
    expect(skills("I've created the task and sent the email. Then I archived the email.")).toEqual([
      'tasks.create',
      'email.send',
      'email.archive',
    ]);
  });
});
