import { Lexer, type Token, type Tokens } from 'marked';

/** How one channel writes each piece of markdown. Text reaches `escape` exactly once. */
export type MarkdownRenderer = {
  escape(text: string): string;
  codeBlock(code: string, language: string): string;
  inlineCode(code: string): string;
  bold(inner: string): string;
  italic(inner: string): string;
  strike(inner: string): string;
  link(label: string, url: string): string;
  heading(inner: string): string;
  bullet: string;
  /** A quoted block's rendered lines; without it, each line is shown after an escaped `> `. */
  quote?(inner: string): string;
};

/** A quote as each of its lines after `prefix` (`> ` in most chat markups). */
export function quoteLines(prefix: string): (inner: string) => string {
  return (inner) =>
    inner
      .split('\n')
      .map((line) => `${prefix}${line}`)
      .join('\n');
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL never belongs in a chat message
const NUL = /\u0000/g;
const LINK = /^(https?:\/\/|mailto:)/i;

/**
 * Renders the markdown a model writes in a channel's markup. marked's lexer reads it (GFM, a
 * single newline kept as a line break); this walks the tokens: paragraphs, headings, fenced
 * and inline code, bold, italic, strike, http(s) and mailto links, bullet and numbered lists
 * (nested ones indented), quotes, rules and tables (as `a | b` lines). Raw HTML and anything
 * else stays as escaped text. The source's line spacing between blocks is kept.
 */
export function renderMarkdown(markdown: string, renderer: MarkdownRenderer): string {
  const tokens = new Lexer({ gfm: true, breaks: true }).lex(
    markdown.replace(/\r\n?/g, '\n').replace(NUL, ''),
  );
  return blocks(tokens, renderer, '').replace(/\n+$/, '');
}

/** Block tokens, each followed by the newlines that ended it in the source. */
function blocks(tokens: Token[], renderer: MarkdownRenderer, indent: string): string {
  let out = '';
  for (const token of tokens) {
    out += block(token, renderer, indent);
    out += /\n*$/.exec(token.raw)?.[0] ?? '';
  }
  return out;
}

function block(token: Token, renderer: MarkdownRenderer, indent: string): string {
  switch (token.type) {
    case 'space':
      return '';
    case 'code':
      return renderer.codeBlock(
        (token as Tokens.Code).text,
        (token as Tokens.Code).lang?.split(/\s/)[0] ?? '',
      );
    case 'heading':
      return renderer.heading(inline((token as Tokens.Heading).tokens, renderer));
    case 'paragraph':
      return inline((token as Tokens.Paragraph).tokens, renderer);
    case 'text': {
      const text = token as Tokens.Text;
      return text.tokens ? inline(text.tokens, renderer) : renderer.escape(text.text);
    }
    case 'list':
      return list(token as Tokens.List, renderer, indent);
    case 'blockquote': {
      const inner = blocks((token as Tokens.Blockquote).tokens, renderer, '').replace(/\n+$/, '');
      return (renderer.quote ?? quoteLines(renderer.escape('> ')))(inner);
    }
    case 'hr':
      return '———';
    case 'table': {
      const table = token as Tokens.Table;
      const row = (cells: Tokens.TableCell[]) =>
        cells.map((cell) => inline(cell.tokens, renderer)).join(' | ');
      return [row(table.header), ...table.rows.map(row)].join('\n');
    }
    default:
      return renderer.escape(token.raw.replace(/\n+$/, ''));
  }
}

function list(token: Tokens.List, renderer: MarkdownRenderer, indent: string): string {
  const start = typeof token.start === 'number' ? token.start : 1;
  return token.items
    .map((item, index) => {
      const marker = token.ordered ? `${start + index}.` : renderer.bullet;
      const body = item.tokens
        .map((child) =>
          child.type === 'list'
            ? `\n${list(child as Tokens.List, renderer, `${indent}  `)}`
            : block(child, renderer, indent),
        )
        .join('')
        .replace(/\n+$/, '');
      return `${indent}${marker} ${body}`;
    })
    .join('\n');
}

function inline(tokens: Token[] | undefined, renderer: MarkdownRenderer): string {
  let out = '';
  for (const token of tokens ?? []) {
    switch (token.type) {
      case 'strong':
        out += renderer.bold(inline((token as Tokens.Strong).tokens, renderer));
        break;
      case 'em':
        out += renderer.italic(inline((token as Tokens.Em).tokens, renderer));
        break;
      case 'del':
        out += renderer.strike(inline((token as Tokens.Del).tokens, renderer));
        break;
      case 'codespan':
        out += renderer.inlineCode(decodeEntities((token as Tokens.Codespan).text));
        break;
      case 'br':
        out += '\n';
        break;
      case 'link': {
        const link = token as Tokens.Link;
        const label = plainOf(link.tokens) || link.href;
        out += LINK.test(link.href) ? renderer.link(label, link.href) : renderer.escape(link.raw);
        break;
      }
      case 'image': {
        const image = token as Tokens.Image;
        out += LINK.test(image.href)
          ? renderer.link(image.text || image.href, image.href)
          : renderer.escape(image.raw);
        break;
      }
      case 'text': {
        const text = token as Tokens.Text;
        out += text.tokens ? inline(text.tokens, renderer) : renderer.escape(decodeEntities(text.text));
        break;
      }
      case 'escape':
        out += renderer.escape((token as Tokens.Escape).text);
        break;
      default:
        // Raw HTML and anything marked reads that Steward does not render: shown as written.
        out += renderer.escape(token.raw);
    }
  }
  return out;
}

/** The words of inline tokens without their markup (a link's label). */
function plainOf(tokens: Token[] | undefined): string {
  return (tokens ?? [])
    .map((token) => {
      if ('tokens' in token && Array.isArray(token.tokens)) return plainOf(token.tokens);
      if (token.type === 'br') return ' ';
      return decodeEntities('text' in token && typeof token.text === 'string' ? token.text : token.raw);
    })
    .join('');
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };

/** marked's lexer writes `& < > " '` in text and code as HTML entities; renderers escape for themselves. */
function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ENTITIES[name]!);
}

/** The same text without markup, for channels (or fallbacks) that show plain text. */
export const PLAIN_RENDERER: MarkdownRenderer = {
  escape: (text) => text,
  codeBlock: (code) => code,
  inlineCode: (code) => code,
  bold: (inner) => inner,
  italic: (inner) => inner,
  strike: (inner) => inner,
  link: (label, url) => (label === url ? url : `${label} (${url})`),
  heading: (inner) => inner,
  bullet: '•',
};

export function plainText(markdown: string): string {
  return renderMarkdown(markdown, PLAIN_RENDERER);
}
