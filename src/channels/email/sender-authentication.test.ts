import { expect, it } from 'vitest';
import type { ParsedMailWithHeaders } from '../../integrations/index.ts';
import { unauthenticatedReason } from './sender-authentication.ts';

const mail = (results: string | null, from = 'ana@example.org'): ParsedMailWithHeaders => ({
  from: { name: null, address: from },
  to: [],
  cc: [],
  subject: '',
  date: null,
  text: '',
  attachments: [],
  messageId: null,
  references: [],
  inReplyTo: null,
  headers: results === null ? {} : { 'authentication-results': results },
});

it('accepts DMARC pass, or a DKIM or SPF pass aligned with the From domain', () => {
  expect(
    unauthenticatedReason(
      mail(
        'mx.google.com; dkim=pass header.i=@example.org header.s=s1; spf=pass (google.com: domain of ana@example.org designates 192.0.2.1 as permitted sender) smtp.mailfrom=ana@example.org; dmarc=pass (p=REJECT sp=REJECT dis=NONE) header.from=example.org',
      ),
    ),
  ).toBeNull();
  expect(unauthenticatedReason(mail('mx.example.com; dkim=pass header.d=example.org'))).toBeNull();
  expect(
    unauthenticatedReason(mail('mx.example.com; dkim=pass header.d=example.org', 'ana@mail.example.org')),
  ).toBeNull();
  expect(unauthenticatedReason(mail('mx.example.com; spf=pass smtp.mailfrom=bounce@example.org'))).toBeNull();
});

it('refuses a missing header, failures, and passes for another domain', () => {
  expect(unauthenticatedReason(mail(null))).toContain('no Authentication-Results');
  expect(
    unauthenticatedReason(mail('mx.example.com; dmarc=fail header.from=example.org; spf=softfail')),
  ).toContain('dmarc=fail, spf=softfail');
  expect(
    unauthenticatedReason(
      mail('mx.example.com; dkim=pass header.d=evil.example; spf=pass smtp.mailfrom=evil.example'),
    ),
  ).toContain('not authenticated for example.org');
  expect(unauthenticatedReason(mail('mx.example.com; none'))).toContain('no results');
});
