import { expect, it } from 'vitest';
import { attachmentFileName } from './attachments.ts';

it('makes a file name from an attachment name, dropping what could disguise it', () => {
  expect(attachmentFileName('invoice\u202Efdp.exe', 'x')).toBe('invoicefdp.exe');
  expect(attachmentFileName('..\\..\\minutes.md', 'x')).toBe('minutes.md');
  expect(attachmentFileName('\u200F', 'attachment-1')).toBe('attachment-1');
});
