import { baseName, extensionOf } from './vault-path.ts';

/** A document's text, split by weight for the index: title > headings > body. */
export type ExtractedText = {
  kind: 'markdown' | 'text' | 'pdf' | 'docx' | 'xlsx' | 'pptx' | 'binary';
  title: string;
  headings: string;
  body: string;
  /** The text as a person reads it (what files.read shows for converted documents). */
  readable: string;
};

const MARKDOWN = new Set(['.md', '.markdown', '.mdx']);
const TEXT = new Set([
  '.txt',
  '.text',
  '.csv',
  '.tsv',
  '.json',
  '.yaml',
  '.yml',
  '.toml',
  '.xml',
  '.html',
  '.htm',
  '.ics',
  '.log',
  '.ini',
  '.org',
  '.rst',
]);
const BINARY = new Set([
  '.png',
  '.jpg',
  '.jpeg',
  '.gif',
  '.webp',
  '.zip',
  '.gz',
  '.mp3',
  '.mp4',
  '.ogg',
  '.wav',
]);

/** Readable name words of a path: `reports/q1-plan_v2.md` → `q1 plan v2`. */
export function nameWords(userPath: string): string {
  const name = baseName(userPath);
  const ext = extensionOf(userPath);
  return (ext ? name.slice(0, -ext.length) : name).replace(/[-_.]+/g, ' ').trim();
}

/** Which extractor a file gets, from its name and (for unknown names) its bytes. */
export function documentKind(userPath: string, content?: Buffer): ExtractedText['kind'] {
  const ext = extensionOf(userPath).toLowerCase();
  if (MARKDOWN.has(ext)) return 'markdown';
  if (ext === '.pdf') return 'pdf';
  if (ext === '.docx') return 'docx';
  if (ext === '.xlsx') return 'xlsx';
  if (ext === '.pptx') return 'pptx';
  if (TEXT.has(ext)) return 'text';
  if (BINARY.has(ext) || !content) return 'binary';
  return looksLikeText(content) ? 'text' : 'binary';
}

function looksLikeText(content: Buffer): boolean {
  const head = content.subarray(0, 8192);
  if (head.includes(0)) return false;
  return !new TextDecoder('utf-8', { fatal: false }).decode(head).includes('\uFFFD');
}

/**
 * Extracts the text of a file. Throws only when a PDF or Office file is damaged; callers
 * record that as the file's index note.
 */
export async function extractText(userPath: string, content: Buffer): Promise<ExtractedText> {
  const kind = documentKind(userPath, content);
  const name = nameWords(userPath);
  if (kind === 'markdown') {
    const source = content.toString('utf8');
    return { kind, ...splitMarkdown(source, name), readable: source };
  }
  if (kind === 'text') {
    const source = content.toString('utf8');
    return { kind, title: name, headings: '', body: source, readable: source };
  }
  if (kind === 'pdf') {
    const { extractText: pdfText, getDocumentProxy } = await import('unpdf');
    const pdf = await getDocumentProxy(new Uint8Array(content));
    try {
      const { text } = await pdfText(pdf, { mergePages: true });
      return { kind, title: name, headings: '', body: text, readable: text };
    } finally {
      await pdf.cleanup();
    }
  }
  if (kind === 'docx') {
    const mammoth = (await import('mammoth')).default;
    const { value: html } = await mammoth.convertToHtml({ buffer: content });
    const headings = [...html.matchAll(/<h[1-6][^>]*>(.*?)<\/h[1-6]>/g)].map((match) => htmlText(match[1]!));
    const body = htmlText(html.replace(/<h[1-6][^>]*>.*?<\/h[1-6]>/g, '\n').replace(/<\/(p|li|tr)>/g, '\n'));
    const readable = htmlText(
      html
        .replace(
          /<h([1-6])[^>]*>(.*?)<\/h[1-6]>/g,
          (_, level: string, text: string) => `\n${'#'.repeat(Number(level))} ${text}\n`,
        )
        .replace(/<li[^>]*>/g, '\n- ')
        .replace(/<\/(p|tr)>/g, '\n'),
    );
    return {
      kind,
      title: `${name} ${headings[0] ?? ''}`.trim(),
      headings: headings.join('\n'),
      body,
      readable,
    };
  }
  if (kind === 'xlsx' || kind === 'pptx') {
    // Loaded on the first spreadsheet or slide deck, like the PDF and Word readers above.
    const { pptxText, xlsxText } = await import('./office-text.ts');
    const text = kind === 'xlsx' ? await xlsxText(content) : await pptxText(content);
    const first = text.headings.split('\n')[0] ?? '';
    return { kind, title: kind === 'pptx' ? `${name} ${first}`.trim() : name, ...text };
  }
  return { kind, title: name, headings: '', body: '', readable: '' };
}

/** Markdown: frontmatter `title` and the first `#` heading join the name in the title. */
export function splitMarkdown(source: string, name: string): Omit<ExtractedText, 'kind' | 'readable'> {
  let text = source.replace(/^\uFEFF/, '');
  let frontTitle = '';
  const front = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (front) {
    frontTitle = /^title:\s*["']?(.+?)["']?\s*$/m.exec(front[1]!)?.[1] ?? '';
    text = text.slice(front[0].length);
  }
  const headings: string[] = [];
  const body: string[] = [];
  let inFence = false;
  for (const line of text.split(/\r?\n/)) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    const heading = inFence ? null : /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) headings.push(heading[1]!);
    else body.push(line);
  }
  const title = [name, frontTitle, headings[0] ?? ''].filter(Boolean).join(' ');
  return { title, headings: headings.join('\n'), body: body.join('\n').trim() };
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", nbsp: ' ' };

function htmlText(html: string): string {
  return html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&(amp|lt|gt|quot|#39|nbsp);/g, (_, entity: string) => ENTITIES[entity] ?? ' ')
    .replace(/[ \t]+/g, ' ')
    .replace(/\n\s+/g, '\n')
    .trim();
}
