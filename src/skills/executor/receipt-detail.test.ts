import { describe, expect, it } from 'vitest';
import { oneLine, receiptDetailFromFlags } from './receipt-detail.ts';

describe('receiptDetailFromFlags', () => {
  it('takes the main flag, most telling first', () => {
    expect(receiptDetailFromFlags({ priority: 'high', title: 'Alpha plan' })).toBe('Alpha plan');
    expect(receiptDetailFromFlags({ to: ['bob@example.com', 'ann@example.com'], subject: 'Q3' })).toBe('Q3');
    expect(receiptDetailFromFlags({ to: ['bob@example.com', 'ann@example.com'] })).toBe(
      'bob@example.com, ann@example.com',
    );
    expect(receiptDetailFromFlags({ id: 't_4kx9m2qa', status: 'done' })).toBe('t_4kx9m2qa');
  });

  it('falls back to the first flag with a value, never one named like a secret', () => {
    expect(receiptDetailFromFlags({ archive: true, label: 'Receipts' })).toBe('Receipts');
    expect(receiptDetailFromFlags({ api_key: 'sk-live-123', label: 'x' })).toBe('x');
    expect(receiptDetailFromFlags({ password: 'hunter2' })).toBe('');
    expect(receiptDetailFromFlags({ rotate: true })).toBe('');
  });

  it('drops credentials from URLs and keeps the detail on one short line', () => {
    expect(receiptDetailFromFlags({ url: 'https://ann:s3cret@dav.example.com/cal' })).toBe(
      'https://dav.example.com/cal',
    );
    expect(receiptDetailFromFlags({ title: 'Line one\n  line two' })).toBe('Line one line two');
    const long = receiptDetailFromFlags({ content: 'word '.repeat(40) });
    expect(long.length).toBe(80);
    expect(long.endsWith('…')).toBe(true);
    expect(oneLine('a'.repeat(10), 5)).toBe('aaaa…');
  });
});
