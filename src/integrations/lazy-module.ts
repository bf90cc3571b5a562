import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

/**
 * A library loaded on its first use instead of at start-up, where nothing uses it: the mail
 * libraries (imapflow, nodemailer, mailparser and their MIME and charset tables) and ical.js
 * are ~4 MB of sources and ~10 MB of heap a server that never touches mail or a calendar feed
 * need not carry; tar-stream (backups) and mime-types (uploads) another ~1 MB of heap. Loaded synchronously (`require` of an ES module), as the same module instance
 * an `import` gives, so nothing is loaded twice.
 */
export function lazyModule<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= require(fileURLToPath(import.meta.resolve(specifier))) as T;
    return loaded;
  };
}
