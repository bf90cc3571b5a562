import { readFileSync } from 'node:fs';

let version: string | null = null;

/** This build's version (package.json), written into every backup's manifest. */
export function stewardVersion(): string {
  version ??= (
    JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  ).version;
  return version;
}
