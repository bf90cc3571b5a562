import { z } from 'zod';
import { errorMessage } from '../../../errors.ts';
import { documentKind, extractText } from '../../../files/index.ts';
import { flag } from '../../flags.ts';
import { defineHandler, fail, ok } from '../../types.ts';
import { cleanPath, failWith, fenceFile, filesOf, formatSize, isResult } from './shared.ts';

export const readFileHandler = defineHandler({
  name: 'files.read',
  flags: z.object({ path: flag.string(), version: flag.int({ min: 1 }).optional() }).strict(),
  async execute(flags, ctx) {
    const files = filesOf(ctx);
    if (isResult(files)) return files;
    const path = cleanPath(flags.path);
    if (isResult(path)) return path;
    const vault = files.vault(ctx.user.id);
    const { maxReadBytes } = files.settings();
    const versions = await vault.versions(path);
    if (!versions.ok) return failWith(versions);
    const current = versions.value.find((item) => item.current);
    const version = flags.version ?? current?.version;
    if (version === undefined)
      return fail(
        `"${path}" was deleted; its versions are v1 to v${versions.value.at(-1)!.version}. Read one with --version N, or bring it back with files.restore.`,
      );
    const wanted = versions.value.find((item) => item.version === version);
    if (!wanted)
      return fail(
        `"${path}" has versions v1 to v${versions.value.at(-1)!.version}; there is no v${version}.`,
      );
    const kind = documentKind(path);
    const converted = kind === 'pdf' || kind === 'docx' || kind === 'xlsx' || kind === 'pptx';
    // PDFs and Word files are read through their extracted text, which is far smaller than the file.
    const limit = converted ? maxReadBytes * 20 : maxReadBytes;
    if (wanted.size > limit)
      return fail(
        `"${path}" is ${formatSize(wanted.size)}, more than files.read shows (${formatSize(limit)}). Find the part you need with files.search --query "words".`,
        { metadata: { code: 'too_large', size: wanted.size } },
      );
    const content = await vault.readVersion(path, version);
    if (!content.ok) return failWith(content);
    let text: string;
    try {
      const extracted = await extractText(path, content.value);
      if (extracted.kind === 'binary')
        return fail(`"${path}" is a binary file (${formatSize(wanted.size)}) that cannot be shown as text.`, {
          metadata: { code: 'binary' },
        });
      text = converted ? extracted.readable : content.value.toString('utf8');
    } catch (error) {
      return fail(`"${path}" could not be read as ${kind}: ${errorMessage(error)}`);
    }
    if (Buffer.byteLength(text) > maxReadBytes)
      return fail(
        `The text of "${path}" is ${formatSize(Buffer.byteLength(text))}, more than files.read shows (${formatSize(maxReadBytes)}). Find the part you need with files.search --query "words".`,
        { metadata: { code: 'too_large', size: wanted.size } },
      );
    const label = `${path} (v${version}${wanted.current ? '' : ', archived'}, ${formatSize(wanted.size)}${converted ? `, text extracted from ${kind.toUpperCase()}` : ''})`;
    return ok(`${label}:\n${fenceFile(path, text)}`, {
      metadata: { path: path, version, current: wanted.current, size: wanted.size, kind },
    });
  },
});
