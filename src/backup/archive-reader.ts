import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, utimes } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { errorMessage, StewardError } from '../errors.ts';
import { lazyModule } from '../integrations/index.ts';
import { CHECKSUMS_ENTRY } from './archive-writer.ts';

const tarStream = lazyModule<typeof import('tar-stream')>('tar-stream');

export type ExtractOptions = {
  /** Called with the first entry's bytes before anything else is read (refuse early by throwing). */
  onFirstEntry?: (name: string, content: Buffer) => void;
};

const damaged = (message: string, cause?: unknown) =>
  new StewardError('backup_damaged', message, cause === undefined ? undefined : { cause });

/**
 * A safe relative entry name: no absolute path, no `..`, `.` or empty part, no backslash or
 * NUL. Anything else is refused, so extraction never writes outside its folder.
 */
export function entryNameProblem(name: string): string | null {
  if (name.includes('\0') || name.includes('\\')) return 'has a NUL or backslash';
  if (name.startsWith('/')) return 'is absolute';
  const parts = name.replace(/\/$/, '').split('/');
  if (parts.some((part) => part === '' || part === '.' || part === '..')) return 'has an empty, . or .. part';
  return null;
}

/**
 * Extracts a gzipped tar written by ArchiveWriter into `dir` (or, with `dir` null, only checks it: regular files and folders only,
 * times and permissions kept, never a link), checking every entry against SHA256SUMS at its end.
 * Throws `backup_damaged` naming the first problem; `dir` then holds a partial copy to remove.
 */
export async function extractArchive(
  file: string,
  dir: string | null,
  options: ExtractOptions = {},
): Promise<Map<string, string>> {
  const sums = new Map<string, string>();
  let listed: Map<string, string> | null = null;
  let first = true;
  const extractor = tarStream().extract();
  const reading = pipeline(createReadStream(file), createGunzip(), extractor).catch((error: unknown) => {
    throw damaged(`the archive is damaged or not a Steward backup (${errorMessage(error)})`, error);
  });
  reading.catch(() => undefined);
  try {
    for await (const entry of extractor) {
      const { name, type } = entry.header;
      const problem = entryNameProblem(name);
      if (problem) throw damaged(`the archive entry "${name}" ${problem}: refusing to extract it`);
      if (listed)
        throw damaged(`the archive has entries after ${CHECKSUMS_ENTRY}: it is not one Steward wrote`);
      if (type === 'directory') {
        if (dir !== null) await mkdir(path.join(dir, name), { recursive: true, mode: 0o700 });
        entry.resume();
        continue;
      }
      if (type !== 'file') throw damaged(`the archive entry "${name}" is a ${type}, not a file: refusing it`);
      if (name === CHECKSUMS_ENTRY) {
        listed = parseChecksums(Buffer.concat(await chunks(entry)).toString('utf8'));
        continue;
      }
      const target = dir === null ? null : path.join(dir, name);
      if (target !== null) await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
      const hash = createHash('sha256');
      const out =
        target === null
          ? null
          : createWriteStream(target, { mode: (entry.header.mode ?? 0o600) & 0o755, flags: 'wx' });
      const kept: Buffer[] = [];
      for await (const chunk of entry as AsyncIterable<Buffer>) {
        hash.update(chunk);
        if (first) kept.push(chunk);
        if (out && !out.write(chunk)) await once(out, 'drain');
      }
      if (out && target !== null) {
        out.end();
        await once(out, 'close');
        if (entry.header.mtime) await utimes(target, entry.header.mtime, entry.header.mtime);
      }
      sums.set(name, hash.digest('hex'));
      if (first) {
        first = false;
        options.onFirstEntry?.(name, Buffer.concat(kept));
      }
    }
    await reading;
  } catch (error) {
    extractor.destroy();
    await reading.catch(() => undefined);
    if (error instanceof StewardError) throw error;
    throw damaged(`the archive is damaged or not a Steward backup (${errorMessage(error)})`, error);
  }
  if (!listed)
    throw damaged(
      `the archive ends without ${CHECKSUMS_ENTRY}: it was cut short, or is not a Steward backup`,
    );
  for (const [name, sum] of listed) {
    const actual = sums.get(name);
    if (actual === undefined) throw damaged(`the archive lacks "${name}", which ${CHECKSUMS_ENTRY} lists`);
    if (actual !== sum)
      throw damaged(`"${name}" in the archive does not match its checksum: the archive is damaged`);
  }
  for (const name of sums.keys())
    if (!listed.has(name)) throw damaged(`"${name}" in the archive is not in ${CHECKSUMS_ENTRY}`);
  return sums;
}

async function chunks(stream: AsyncIterable<Buffer>): Promise<Buffer[]> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(chunk);
  return parts;
}

function parseChecksums(text: string): Map<string, string> {
  const sums = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const match = /^([0-9a-f]{64}) {2}(.+)$/.exec(line);
    if (!match) throw damaged(`${CHECKSUMS_ENTRY} has a malformed line: the archive is damaged`);
    sums.set(match[2]!, match[1]!);
  }
  return sums;
}
