import { expect, it } from 'vitest';
import type { ParsedMailWithHeaders } from '../../integrations/index.ts';
import { normalizeInboundMail } from './inbound-mail.ts';

const ADDRESS = 'steward@example.com';
const mail = (fields: Partial<ParsedMailWithHeaders> = {}): ParsedMailWithHeaders => ({
  from: { name: 'Ana', address: 'Ana@Example.org' },
  to: [{ name: null, address: ADDRESS }],
  cc: [],
  subject: 'Groceries',
  date: null,
  text: 'milk and eggs',
  attachments: [],
  messageId: '<a1@example.org>',
  references: [],
  inReplyTo: null,
  headers: {},
  ...fields,
});
const context = { address: ADDRESS, fallbackId: '7.12', requireAuthentication: false };

it('takes a first mail with its subject, the sender in lower case, threading for the reply', () => {
  expect(normalizeInboundMail(mail(), context)).toEqual({
    message: {
      channel: 'email',
      channelMessageId: '<a1@example.org>',
      chatId: 'ana@example.org',
      senderId: 'ana@example.org',
      senderName: 'Ana',
      kind: 'text',
      text: 'Groceries\n\nmilk and eggs',
      meta: { subject: 'Groceries', replyToMessageId: '<a1@example.org>', references: ['<a1@example.org>'] },
    },
  });
});

it('leaves the subject out of a reply; falls back to the UID for a mail without Message-ID', () => {
  const received = normalizeInboundMail(
    mail({
      subject: 'Re: Groceries',
      messageId: null,
      references: ['<x@s>'],
      to: [{ name: null, address: 'Steward+home@Example.com' }],
    }),
    context,
  );
  expect(received).toMatchObject({
    message: {
      text: 'milk and eggs',
      channelMessageId: '<7.12@steward.invalid>',
      meta: { references: ['<x@s>', '<7.12@steward.invalid>'] },
    },
  });
});

it('skips mail not addressed to the assistant, and every kind of robot', () => {
  expect(normalizeInboundMail(mail({ to: [{ name: null, address: 'ana@example.org' }] }), context)).toEqual({
    skipped: expect.stringContaining('not addressed'),
  });
  const robots: Array<Record<string, string>> = [
    { 'auto-submitted': 'auto-generated' },
    { precedence: 'list' },
    { 'list-unsubscribe': '<mailto:leave@example.org>' },
    { 'x-autoreply': 'yes' },
    { 'return-path': '<>' },
    { 'content-type': 'multipart/report; report-type=delivery-status' },
  ];
  for (const headers of robots) {
    expect(normalizeInboundMail(mail({ headers }), context)).toHaveProperty('skipped');
  }
  expect(normalizeInboundMail(mail({ headers: { 'auto-submitted': 'no' } }), context)).toHaveProperty(
    'message',
  );
  expect(
    normalizeInboundMail(mail({ from: { name: null, address: 'postmaster@example.org' } }), context),
  ).toHaveProperty('skipped');
});

it('skips a sender the receiving server did not authenticate, when that is required', () => {
  expect(normalizeInboundMail(mail(), { ...context, requireAuthentication: true })).toEqual({
    skipped: expect.stringContaining('no Authentication-Results'),
  });
  const signed = mail({
    headers: { 'authentication-results': 'mx.example.com; dmarc=pass header.from=example.org' },
  });
  expect(normalizeInboundMail(signed, { ...context, requireAuthentication: true })).toHaveProperty('message');
});
