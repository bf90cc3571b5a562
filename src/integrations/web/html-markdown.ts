import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { NodeHtmlMarkdown } from 'node-html-markdown';
import { parse, serialize } from 'parse5';

/** The readable part of an HTML page, as markdown, with what the page says about itself. */
export type ReadablePage = {
  title: string | null;
  byline: string | null;
  siteName: string | null;
  published: string | null;
  markdown: string;
  /** Whether the article extractor found the page's main text (false: the whole body was converted). */
  article: boolean;
};

/** The few DOM members used here (the project's TypeScript has no DOM library). */
type DomElement = {
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  remove(): void;
  readonly innerHTML: string;
  readonly textContent: string | null;
};
type DomDocument = {
  querySelectorAll(selectors: string): Iterable<DomElement>;
  querySelector(selectors: string): DomElement | null;
  readonly body: DomElement | null;
  readonly title: string;
};

/** Articles shorter than this are likely a wrong guess (a cookie banner, a caption): the body is used instead. */
const MIN_ARTICLE_CHARS = 200;

/** Elements that never carry readable text. */
const NOISE =
  'script, style, noscript, template, iframe, object, embed, svg, canvas, form, button, select, input';

/**
 * Turns an HTML page into markdown: Mozilla's Readability (Firefox Reader View) finds the main
 * text, node-html-markdown converts it. Links and images are made absolute against `pageUrl`; script
 * links are dropped. A page without a recognisable article (a table of train times, a short
 * notice) is converted whole, minus scripts, styles and forms.
 */
export function htmlToMarkdown(source: string, pageUrl: string): ReadablePage {
  // parse5 builds the tree as browsers do (implied <html>, <head>, <body>, unclosed tags);
  // LinkeDOM, which Readability works on, needs that complete document.
  const html = serialize(parse(source));
  const document = parseHTML(html).document as unknown as DomDocument;
  absolutize(document, pageUrl);
  const fallbackTitle = document.title.trim() || null;
  let article: ReturnType<Readability['parse']> = null;
  try {
    // Readability changes the document it reads; the fallback below reparses.
    article = new Readability(document as never, { charThreshold: MIN_ARTICLE_CHARS }).parse();
  } catch {
    article = null;
  }
  const converter = markdownConverter();
  const found = article?.content && (article.textContent ?? '').trim().length >= MIN_ARTICLE_CHARS;
  let markdown: string;
  if (found) markdown = converter.translate(article!.content!);
  else {
    const whole = parseHTML(html).document as unknown as DomDocument;
    absolutize(whole, pageUrl);
    for (const element of [...whole.querySelectorAll(NOISE)]) element.remove();
    markdown = whole.body ? converter.translate(whole.body.innerHTML) : '';
  }
  return {
    title: clean(article?.title) ?? fallbackTitle,
    byline: clean(article?.byline),
    siteName: clean(article?.siteName),
    published: clean(article?.publishedTime),
    markdown: tidy(markdown),
    article: Boolean(found),
  };
}

function absolutize(document: DomDocument, pageUrl: string): void {
  const base = document.querySelector('base[href]')?.getAttribute('href');
  let baseUrl = pageUrl;
  if (base) {
    try {
      baseUrl = new URL(base, pageUrl).href;
    } catch {
      // an unusable <base>: the page's own address stays the base
    }
  }
  for (const [selector, attribute] of [
    ['a[href]', 'href'],
    ['img[src]', 'src'],
  ] as const) {
    for (const element of document.querySelectorAll(selector)) {
      const value = element.getAttribute(attribute) ?? '';
      let absolute: URL | null = null;
      try {
        absolute = new URL(value, baseUrl);
      } catch {
        absolute = null;
      }
      if (
        absolute &&
        (absolute.protocol === 'http:' || absolute.protocol === 'https:' || absolute.protocol === 'mailto:')
      )
        element.setAttribute(attribute, absolute.href);
      else element.removeAttribute(attribute);
    }
  }
}

let converter: NodeHtmlMarkdown | null = null;

function markdownConverter(): NodeHtmlMarkdown {
  converter ??= new NodeHtmlMarkdown(
    {
      bulletMarker: '-',
      codeBlockStyle: 'fenced',
      emDelimiter: '_',
      maxConsecutiveNewlines: 2,
      useLinkReferenceDefinitions: false,
      ignore: ['script', 'style', 'noscript', 'template', 'iframe', 'svg', 'canvas', 'button'],
    },
    {
      // An image says what it shows only through its alt text; one without is noise to a reader.
      img: ({ node }) => {
        const alt = (node.getAttribute('alt') ?? '').replace(/\s+/g, ' ').trim();
        const src = node.getAttribute('src');
        return alt && src
          ? { content: `![${alt.replace(/[[\]]/g, '')}](${src})`, recurse: false }
          : { ignore: true };
      },
    },
  );
  return converter;
}

function clean(value: string | null | undefined): string | null {
  const text = value?.replace(/\s+/g, ' ').trim();
  return text ? text : null;
}

/** At most one blank line in a row, no trailing spaces. */
function tidy(markdown: string): string {
  return markdown
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
