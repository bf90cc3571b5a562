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
};

const PLACEHOLDER = (index: number) => `\u0000${index}\u0000`;
const BOLD = ['\u0001', '\u0002'] as const;
const ITALIC = ['\u0003', '\u0004'] as const;
const STRIKE = ['\u0005', '\u0006'] as const;
const MARKERS = '\u0001-\u0006';
/** Our placeholder and marker characters, removed from the input so nobody can forge them. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly the characters to remove
const CONTROL = /[\u0000-\u0006]/g;

/** Inline markup of one line: code spans first (their content is literal), then links and emphasis. */
function renderInline(line: string, renderer: MarkdownRenderer): string {
  const saved: string[] = [];
  const keep = (value: string) => {
    saved.push(value);
    return PLACEHOLDER(saved.length - 1);
  };
  let text = line.replace(/`([^`\n]+)`/g, (_, code: string) => keep(renderer.inlineCode(code)));
  // A backslash before markdown punctuation shows that character as written (receipt lines
  // escape what they quote this way).
  text = text.replace(/\\([\\*_~[\]])/g, (_, char: string) => keep(renderer.escape(char)));
  text = text.replace(/\[([^\]\n]+)\]\((https?:\/\/[^)\s]+)\)/g, (_, label: string, url: string) =>
    keep(renderer.link(label, url)),
  );
  text = renderer.escape(text);
  // Emphasis becomes marker pairs first, so one rule's output is never read by the next
  // (Slack's bold `*x*` is markdown's italic), then markers become the channel's markup.
  text = text
    .replace(/\*\*(?=\S)([^*\n]*?\S)\*\*/g, (_, inner: string) => `${BOLD[0]}${inner}${BOLD[1]}`)
    .replace(
      /(^|[^\w])__(?=\S)([^_\n]*?\S)__(?!\w)/g,
      (_, before: string, inner: string) => `${before}${BOLD[0]}${inner}${BOLD[1]}`,
    )
    .replace(
      /(^|[^*\w])\*(?=[^\s*])([^*\n]*?[^\s*])\*(?![*\w])/g,
      (_, before: string, inner: string) => `${before}${ITALIC[0]}${inner}${ITALIC[1]}`,
    )
    .replace(
      /(^|[^\w])_(?=[^\s_])([^_\n]*?[^\s_])_(?!\w)/g,
      (_, before: string, inner: string) => `${before}${ITALIC[0]}${inner}${ITALIC[1]}`,
    )
    .replace(/~~(?=\S)([^~\n]*?\S)~~/g, (_, inner: string) => `${STRIKE[0]}${inner}${STRIKE[1]}`);
  const kinds: Array<[readonly [string, string], (inner: string) => string]> = [
    [BOLD, renderer.bold],
    [ITALIC, renderer.italic],
    [STRIKE, renderer.strike],
  ];
  for (let changed = true; changed; ) {
    changed = false;
    for (const [[open, close], render] of kinds) {
      const innermost = new RegExp(`${open}([^${MARKERS}]*)${close}`, 'g');
      text = text.replace(innermost, (_, inner: string) => {
        changed = true;
        return render(inner);
      });
    }
  }
  text = text.replace(new RegExp(`[${MARKERS}]`, 'g'), '');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: placeholders are NUL-delimited on purpose
  return text.replace(/\u0000(\d+)\u0000/g, (_, index: string) => saved[Number(index)]!);
}

/**
 * Renders the markdown a model writes (fenced code, inline code, bold, italic, strike, links,
 * headings, bullets) in a channel's markup. Anything unrecognized stays as escaped text.
 */
export function renderMarkdown(markdown: string, renderer: MarkdownRenderer): string {
  const out: string[] = [];
  const lines = markdown.replace(/\r\n/g, '\n').replace(CONTROL, '').split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    const fence = /^\s*```\s*([\w+-]*)\s*$/.exec(line);
    if (fence) {
      const code: string[] = [];
      index++;
      while (index < lines.length && !/^\s*```\s*$/.test(lines[index]!)) code.push(lines[index++]!);
      out.push(renderer.codeBlock(code.join('\n'), fence[1] ?? ''));
      continue;
    }
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading) {
      out.push(renderer.heading(renderInline(heading[1]!, renderer)));
      continue;
    }
    const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
    if (bullet) {
      out.push(`${bullet[1]}${renderer.bullet} ${renderInline(bullet[2]!, renderer)}`);
      continue;
    }
    out.push(renderInline(line, renderer));
  }
  return out.join('\n');
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
