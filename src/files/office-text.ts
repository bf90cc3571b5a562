/**
 * Text of Excel (.xlsx) and PowerPoint (.pptx) files, read from their XML parts: each sheet's
 * cells row by row (sheet names as headings), each slide's text (its first line as a heading).
 */

type Zip = { files: Record<string, { async(type: 'string'): Promise<string> }> };

async function open(content: Buffer): Promise<Zip> {
  const { default: JSZip } = await import('jszip');
  return (await JSZip.loadAsync(content)) as unknown as Zip;
}

const part = (zip: Zip, name: string) => zip.files[name]?.async('string') ?? Promise.resolve('');

/** Parts named `<prefix><n>.xml`, in numeric order. */
function numbered(zip: Zip, prefix: string): string[] {
  return Object.keys(zip.files)
    .filter((name) => name.startsWith(prefix) && /\d+\.xml$/.test(name))
    .sort((a, b) => Number(/(\d+)\.xml$/.exec(a)![1]) - Number(/(\d+)\.xml$/.exec(b)![1]));
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const xmlText = (text: string) =>
  text.replace(/&(amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);/gi, (_, entity: string) => {
    if (entity.startsWith('#x')) return String.fromCodePoint(Number.parseInt(entity.slice(2), 16));
    if (entity.startsWith('#')) return String.fromCodePoint(Number(entity.slice(1)));
    return ENTITIES[entity] ?? '';
  });

/** The text of every `<t>` (or `<a:t>`) element inside `xml`, joined. */
const runs = (xml: string, tag: string) =>
  [...xml.matchAll(new RegExp(`<${tag}(?:\\s[^>]*)?>([\\s\\S]*?)</${tag}>`, 'g'))]
    .map((match) => xmlText(match[1]!))
    .join('');

export type OfficeText = { headings: string; body: string; readable: string };

export async function xlsxText(content: Buffer): Promise<OfficeText> {
  const zip = await open(content);
  const shared = [...(await part(zip, 'xl/sharedStrings.xml')).matchAll(/<si>([\s\S]*?)<\/si>/g)].map(
    (match) => runs(match[1]!, 't'),
  );
  const names = [...(await part(zip, 'xl/workbook.xml')).matchAll(/<sheet\b[^>]*\bname="([^"]*)"/g)].map(
    (match) => xmlText(match[1]!),
  );
  const sheets: string[] = [];
  for (const name of numbered(zip, 'xl/worksheets/sheet')) {
    const xml = await part(zip, name);
    const rows = [...xml.matchAll(/<row\b[^>]*>([\s\S]*?)<\/row>/g)].map((row) =>
      [...row[1]!.matchAll(/<c\b([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g)]
        .map((cell) => {
          const attributes = cell[1] ?? '';
          const inner = cell[2] ?? '';
          if (/\bt="s"/.test(attributes)) return shared[Number(/<v>(\d+)<\/v>/.exec(inner)?.[1] ?? -1)] ?? '';
          if (/\bt="inlineStr"/.test(attributes)) return runs(inner, 't');
          return xmlText(/<v>([\s\S]*?)<\/v>/.exec(inner)?.[1] ?? '');
        })
        .join('\t'),
    );
    sheets.push(rows.join('\n'));
  }
  const readable = sheets
    .map((rows, index) => `## ${names[index] ?? `Sheet ${index + 1}`}\n${rows}`)
    .join('\n\n');
  return { headings: names.join('\n'), body: sheets.join('\n\n'), readable };
}

export async function pptxText(content: Buffer): Promise<OfficeText> {
  const zip = await open(content);
  const headings: string[] = [];
  const slides: string[] = [];
  const readable: string[] = [];
  for (const name of numbered(zip, 'ppt/slides/slide')) {
    const xml = await part(zip, name);
    const paragraphs = [...xml.matchAll(/<a:p>([\s\S]*?)<\/a:p>/g)]
      .map((match) => runs(match[1]!, 'a:t').trim())
      .filter(Boolean);
    if (paragraphs[0]) headings.push(paragraphs[0]);
    slides.push(paragraphs.slice(1).join('\n'));
    readable.push(
      `## Slide ${readable.length + 1}: ${paragraphs[0] ?? ''}\n${paragraphs.slice(1).join('\n')}`.trim(),
    );
  }
  return { headings: headings.join('\n'), body: slides.join('\n\n'), readable: readable.join('\n\n') };
}
