import { createRequire } from 'node:module';
import {
  type DriveFile,
  FOLDER_MIME,
  GOOGLE_DOC_MIME,
  GOOGLE_SHEET_MIME,
  GOOGLE_SLIDES_MIME,
} from './drive-client.ts';
import { extensionOf } from './vault-path.ts';

/** mime-types and its 2,000-type table (~0.6 MB of heap), loaded by the first upload. */
let mimeTypes: typeof import('mime-types') | undefined;
function mimeLookup(extension: string): string | false {
  mimeTypes ??= createRequire(import.meta.url)('mime-types') as typeof import('mime-types');
  return mimeTypes.lookup(extension);
}

/** How a Google-native file is brought into the vault: Docs as markdown, Sheets as CSV, Slides as text. */
const EXPORTS: Record<string, { mimeType: string; extension: string }> = {
  [GOOGLE_DOC_MIME]: { mimeType: 'text/markdown', extension: '.md' },
  [GOOGLE_SHEET_MIME]: { mimeType: 'text/csv', extension: '.csv' },
  [GOOGLE_SLIDES_MIME]: { mimeType: 'text/plain', extension: '.txt' },
};

export const isNative = (mimeType: string) =>
  mimeType.startsWith('application/vnd.google-apps.') && mimeType !== FOLDER_MIME;

export const exportFormat = (mimeType: string) => EXPORTS[mimeType] ?? null;

/** The name a Drive file has in the vault: a Google Doc "Plan" is `Plan.md`. */
export function driveName(file: DriveFile): string {
  const format = exportFormat(file.mimeType);
  if (!format || file.name.toLowerCase().endsWith(format.extension)) return file.name;
  return `${file.name}${format.extension}`;
}

/** The MIME type a vault file is uploaded with (mime-types' table, by extension). */
export const mimeFor = (userPath: string) =>
  mimeLookup(extensionOf(userPath).toLowerCase()) || 'application/octet-stream';
