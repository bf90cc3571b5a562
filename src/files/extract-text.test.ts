import { expect, it } from 'vitest';
import { makeDocx, makePdf, makePptx, makeXlsx } from '../../test/support/documents.ts';
import { documentKind, extractText } from './extract-text.ts';

it('splits markdown into title, headings and body', async () => {
  const text = await extractText(
    'notes/q1-plan.md',
    Buffer.from(
      '---\ntitle: "Quarter plan"\n---\n# Goals\nShip the tide tables.\n## Risks\n```\n# not a heading\n```\n',
    ),
  );
  expect(text.kind).toBe('markdown');
  expect(text.title).toBe('q1 plan Quarter plan Goals');
  expect(text.headings).toBe('Goals\nRisks');
  expect(text.body).toContain('Ship the tide tables.');
  expect(text.body).toContain('# not a heading');
});

it('reads the text of a PDF and of a Word document', async () => {
  const pdf = await extractText('scan.pdf', makePdf(['Invoice for harbour dues', 'Total 42 EUR']));
  expect(pdf.kind).toBe('pdf');
  expect(pdf.body).toContain('harbour dues');
  const docx = await extractText('memo.docx', makeDocx('Lighthouse memo', ['Keepers rotate weekly.']));
  expect(docx.kind).toBe('docx');
  expect(docx.headings).toBe('Lighthouse memo');
  expect(docx.title).toBe('memo Lighthouse memo');
  expect(docx.body).toContain('Keepers rotate weekly.');
});

it('reads the cells of an Excel workbook and the text of a PowerPoint deck', async () => {
  const xlsx = await extractText(
    'budget.xlsx',
    makeXlsx({
      Costs: [
        ['item', 'cost'],
        ['rope & tar', 12],
      ],
      Notes: [['ask the harbourmaster']],
    }),
  );
  expect(xlsx.kind).toBe('xlsx');
  expect(xlsx.headings).toBe('Costs\nNotes');
  expect(xlsx.body).toContain('rope & tar\t12');
  expect(xlsx.readable).toBe('## Costs\nitem\tcost\nrope & tar\t12\n\n## Notes\nask the harbourmaster');
  const pptx = await extractText(
    'deck.pptx',
    makePptx([
      ['Harbour plan', 'Dredge the channel'],
      ['Budget', 'Ask the council'],
    ]),
  );
  expect(pptx.kind).toBe('pptx');
  expect(pptx.title).toBe('deck Harbour plan');
  expect(pptx.headings).toBe('Harbour plan\nBudget');
  expect(pptx.readable).toContain('## Slide 2: Budget\nAsk the council');
});

it('tells text from binary when the name does not say', () => {
  expect(documentKind('README', Buffer.from('plain words'))).toBe('text');
  expect(documentKind('blob', Buffer.from([0, 1, 2, 255]))).toBe('binary');
  expect(documentKind('photo.jpg', Buffer.from('x'))).toBe('binary');
});

it('rejects a damaged PDF', async () => {
  await expect(extractText('broken.pdf', Buffer.from('%PDF-1.4 nonsense'))).rejects.toThrow();
});
