/**
 * Text of Excel (.xlsx) and PowerPoint (.pptx) files, read from their XML parts: each sheet's
 * cells row by row (sheet names as headings), each slide's text (its first line as a heading).
 * The XML parts are read with fast-xml-parser (entities, CDATA and attribute order handled).
 */
import { XMLParser } from 'fast-xml-parser';

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

/** One element of fast-xml-parser's ordered output: `{tag: children, ':@': attributes}` or `{'#text': text}`. */
type XmlNode = Record<string, unknown>;

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  trimValues: false,
  parseTagValue: false,
  parseAttributeValue: false,
});

const xml = (text: string): XmlNode[] => (text ? (parser.parse(text) as XmlNode[]) : []);

const tagOf = (node: XmlNode) => Object.keys(node).find((key) => key !== ':@');
const childrenOf = (node: XmlNode) => (node[tagOf(node) ?? ''] as XmlNode[] | undefined) ?? [];
const attribute = (node: XmlNode, name: string) => (node[':@'] as Record<string, string> | undefined)?.[name];

/** Every element named `tag` under `nodes`, in document order (not inside another match). */
function elements(nodes: XmlNode[], tag: string): XmlNode[] {
  return nodes.flatMap((node) => (tagOf(node) === tag ? [node] : elements(childrenOf(node), tag)));
}

/** All text under `nodes`, in document order. */
function textOf(nodes: XmlNode[]): string {
  return nodes
    .map((node) => (typeof node['#text'] === 'string' ? node['#text'] : textOf(childrenOf(node))))
    .join('');
}

/** The text of every `<t>` (or `<a:t>`) element under `node`, joined. */
const runs = (node: XmlNode, tag: string) =>
  elements(childrenOf(node), tag)
    .map((run) => textOf(childrenOf(run)))
    .join('');

export type OfficeText = { headings: string; body: string; readable: string };

export async function xlsxText(content: Buffer): Promise<OfficeText> {
  const zip = await open(content);
  const shared = elements(xml(await part(zip, 'xl/sharedStrings.xml')), 'si').map((item) => runs(item, 't'));
  const names = elements(xml(await part(zip, 'xl/workbook.xml')), 'sheet').map(
    (sheet) => attribute(sheet, 'name') ?? '',
  );
  const sheets: string[] = [];
  for (const name of numbered(zip, 'xl/worksheets/sheet')) {
    const rows = elements(xml(await part(zip, name)), 'row').map((row) =>
      elements(childrenOf(row), 'c')
        .map((cell) => {
          const value = textOf(elements(childrenOf(cell), 'v'));
          const type = attribute(cell, 't');
          if (type === 's') return shared[/^\d+$/.test(value) ? Number(value) : -1] ?? '';
          if (type === 'inlineStr') return runs(cell, 't');
          return value;
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
    const paragraphs = elements(xml(await part(zip, name)), 'a:p')
      .map((paragraph) => runs(paragraph, 'a:t').trim())
      .filter(Boolean);
    if (paragraphs[0]) headings.push(paragraphs[0]);
    slides.push(paragraphs.slice(1).join('\n'));
    readable.push(
      `## Slide ${readable.length + 1}: ${paragraphs[0] ?? ''}\n${paragraphs.slice(1).join('\n')}`.trim(),
    );
  }
  return { headings: headings.join('\n'), body: slides.join('\n\n'), readable: readable.join('\n\n') };
}
