import { type EmailMessage, type EmailSummary, formatAddress } from '../../../integrations/index.ts';
import { localDay, localTime } from '../../../time/index.ts';
import { fenceExternal } from '../../external.ts';

function when(date: Date | null, timezone: string): string {
  return date ? `${localDay(date, timezone)} ${localTime(date, timezone)}` : '(no date)';
}

/** One line per message: `[id] date · sender · subject · unread · labels`. */
export function formatSummaryLine(message: EmailSummary, timezone: string): string {
  const parts = [
    `[${message.id}]`,
    when(message.date, timezone),
    '·',
    formatAddress(message.from),
    '·',
    message.subject.replace(/\s+/g, ' ').trim() || '(no subject)',
  ];
  if (message.unread) parts.push('· unread');
  if (message.labels.length) parts.push(`· ${message.labels.join(', ')}`);
  return parts.join(' ');
}

/** Header lines and body of one message, all of it fenced: every part came from the sender. */
export function formatMessage(message: EmailMessage, timezone: string): string {
  const lines = [
    `From: ${formatAddress(message.from)}`,
    `To: ${message.to.map(formatAddress).join(', ') || '(none)'}`,
  ];
  if (message.cc.length) lines.push(`Cc: ${message.cc.map(formatAddress).join(', ')}`);
  lines.push(`Date: ${when(message.date, timezone)}`, `Subject: ${message.subject || '(no subject)'}`);
  if (message.labels.length) lines.push(`Labels: ${message.labels.join(', ')}`);
  if (message.attachments.length) {
    lines.push(
      `Attachments: ${message.attachments.map((item) => `${item.filename} (${item.contentType}, ${kilobytes(item.size)})`).join('; ')}`,
    );
  }
  lines.push('', message.text || '(no text)');
  return `[${message.id}]\n${fenceExternal(`email:${message.id}`, lines.join('\n'))}`;
}

function kilobytes(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${Math.round(bytes / 1024)} KB`;
}
