import { expect, it } from 'vitest';
import { stripQuotedReply } from './quoted-reply.ts';

it("keeps only the new text above Gmail's and Apple Mail's attribution and quote", () => {
  expect(
    stripQuotedReply(
      'Yes, book it for Friday.\n\nOn Mon, 3 Nov 2026 at 10:00, Steward <steward@example.com> wrote:\n> Shall I book the table?\n> \n',
    ),
  ).toBe('Yes, book it for Friday.');
  expect(
    stripQuotedReply(
      'Thanks!\r\n\r\nOn Mon, 3 Nov 2026 at 10:00, Steward\r\n<steward@example.com> wrote:\r\n> Done.\r\n',
    ),
  ).toBe('Thanks!');
  expect(
    stripQuotedReply('Merci.\n\nLe lun. 3 nov. 2026 à 10:00, Steward <s@example.com> a écrit :\n> Fait.'),
  ).toBe('Merci.');
});

it("cuts Outlook's header block and rule, a signature, and trailing quoted lines", () => {
  expect(
    stripQuotedReply(
      'Move it to 3pm.\n\n________________________________\nFrom: Steward <s@example.com>\nSent: Monday\nSubject: Re: Meeting',
    ),
  ).toBe('Move it to 3pm.');
  expect(
    stripQuotedReply('Fine.\n\nFrom: Steward <s@example.com>\nSent: Monday, 3 November 2026 10:00\n\nDone.'),
  ).toBe('Fine.');
  expect(stripQuotedReply('See you.\n-- \nAna Lima\n+351 555 0100')).toBe('See you.');
  expect(stripQuotedReply('Agreed.\n\n> earlier text\n> more')).toBe('Agreed.');
});

it('keeps an inline reply and plain text untouched', () => {
  const inline = '> Which day?\nFriday.\n> Which time?\nNoon.';
  expect(stripQuotedReply(inline)).toBe(inline);
  expect(stripQuotedReply('What is on my list today?')).toBe('What is on my list today?');
  expect(stripQuotedReply('On second thought, cancel it.')).toBe('On second thought, cancel it.');
});
