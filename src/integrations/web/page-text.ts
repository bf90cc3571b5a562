import { errorMessage } from '../../errors.ts';
import type { FetchedPage } from './page-fetch.ts';

/** A fetched page's readable text, and what it was. */
export type PageText =
  | {
      ok: true;
      kind: 'html' | 'pdf' | 'text';
      title: string | null;
      /** Author, site and date, where the page gives them, as one line. */
      about: string | null;
      text: string;
      /** PDF pages. */
      pages?: number;
    }
  | { ok: false; reason: string };

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
const TEXT_TYPES = new Set([
  'application/json',
  'application/ld+json',
  'application/xml',
  'application/rss+xml',
  'application/atom+xml',
  'application/javascript',
  'application/x-yaml',
  'application/yaml',
]);

/** Media types web.fetch cannot use cut (read whole or not at all). */
export function readWholeOnly(mediaType: string): boolean {
  return mediaType === 'application/pdf';
}

/** What the bytes are: the server's word, else a look at the bytes themselves. */
export function pageKind(page: Pick<FetchedPage, 'mediaType' | 'bytes'>): 'html' | 'pdf' | 'text' | null {
  const type = page.mediaType;
  if (HTML_TYPES.has(type)) return 'html';
  if (type === 'application/pdf' || type === 'application/x-pdf') return 'pdf';
  if (type.startsWith('text/') || TEXT_TYPES.has(type) || type.endsWith('+json') || type.endsWith('+xml'))
    return 'text';
  if (type !== '' && type !== 'application/octet-stream' && type !== 'binary/octet-stream') return null;
  const head = new TextDecoder('latin1').decode(page.bytes.subarray(0, 1024));
  if (head.startsWith('%PDF-')) return 'pdf';
  if (/^\s*(<!doctype html|<html|<head|<body)/i.test(head.replace(/^\uFEFF/, ''))) return 'html';
  return looksLikeText(page.bytes) ? 'text' : null;
}

/**
 * The readable text of a fetched page: HTML through the article extractor into markdown, PDF
 * through pdf.js (unpdf), text as it is. Anything else (images, archives, media) is refused
 * with what it was. Never throws: a damaged PDF is `{ok: false}`.
 */
export async function pageText(page: FetchedPage): Promise<PageText> {
  const kind = pageKind(page);
  if (kind === null) {
    return {
      ok: false,
      reason: `${page.url} is ${page.mediaType || 'binary data'}, not a web page, text or PDF: web.fetch reads only those`,
    };
  }
  if (kind === 'pdf') return pdfText(page);
  const source = decode(page, kind);
  if (kind === 'text') return { ok: true, kind, title: null, about: null, text: source.trim() };
  // The HTML parsers (parse5, LinkeDOM, Readability, node-html-markdown: ~10 MB of heap) load on
  // the first page read, not at start-up.
  const { htmlToMarkdown } = await import('./html-markdown.ts');
  const readable = htmlToMarkdown(source, page.url);
  const about = [readable.byline, readable.siteName, readable.published].filter(Boolean).join(' · ');
  return { ok: true, kind, title: readable.title, about: about || null, text: readable.markdown };
}

async function pdfText(page: FetchedPage): Promise<PageText> {
  if (page.cut) {
    return {
      ok: false,
      reason: `${page.url} is a PDF larger than web.fetch_max_bytes (${page.bytes.byteLength} bytes); a cut PDF cannot be read`,
    };
  }
  try {
    const { extractText, getDocumentProxy, getMeta } = await import('unpdf');
    const pdf = await getDocumentProxy(new Uint8Array(page.bytes));
    try {
      const { totalPages, text } = await extractText(pdf, { mergePages: false });
      const meta = await getMeta(pdf).catch(() => null);
      const title =
        typeof meta?.info.Title === 'string' && meta.info.Title.trim() ? meta.info.Title.trim() : null;
      const author =
        typeof meta?.info.Author === 'string' && meta.info.Author.trim() ? meta.info.Author.trim() : null;
      return {
        ok: true,
        kind: 'pdf',
        title,
        about: author,
        text: text
          .map((pageText) => pageText.trim())
          .filter(Boolean)
          .join('\n\n'),
        pages: totalPages,
      };
    } finally {
      await pdf.cleanup();
    }
  } catch (error) {
    return { ok: false, reason: `${page.url} is a PDF that could not be read (${errorMessage(error)})` };
  }
}

/** Bytes to text: the charset the server named, else (HTML) the page's own <meta charset>, else UTF-8. */
function decode(page: FetchedPage, kind: 'html' | 'text'): string {
  let label = page.charset;
  if (!label && kind === 'html') {
    const head = new TextDecoder('latin1').decode(page.bytes.subarray(0, 2048));
    label = /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head)?.[1]?.toLowerCase() ?? null;
  }
  try {
    return new TextDecoder(label ?? 'utf-8').decode(page.bytes);
  } catch {
    // An unknown label: UTF-8 is the web's default.
    return new TextDecoder('utf-8').decode(page.bytes);
  }
}

function looksLikeText(bytes: Uint8Array): boolean {
  const head = bytes.subarray(0, 8192);
  if (head.includes(0)) return false;
  return !new TextDecoder('utf-8').decode(head).includes('\uFFFD');
}
