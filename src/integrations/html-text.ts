import { lazyModule } from './lazy-module.ts';

// html-to-text (with its HTML parser and selector engine, ~1.6 MB of heap) loads on the first
// conversion, not at start-up, where nothing converts HTML.
const library = lazyModule<typeof import('html-to-text')>('html-to-text');

/**
 * HTML as readable plain text (html-to-text, which mailparser uses too): scripts and styles
 * dropped, block elements on their own lines, entities decoded (a no-break space as a space), links kept as `text [url]`,
 * no line wrapping (chat apps wrap for themselves).
 */
export function htmlToReadableText(html: string): string {
  return library()
    .convert(html, {
      wordwrap: false,
      selectors: [
        { selector: 'img', format: 'skip' },
        { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
      ],
    })
    .replace(/\u00a0/g, ' ')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
