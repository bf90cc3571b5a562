import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../logging/index.ts';

/** Test support: a temp skills root holding `files` (relative path → content). */
export function writeSkillTree(files: Record<string, string> = {}): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'steward-skills-'));
  for (const [relative, content] of Object.entries(files)) writeSkillFile(root, relative, content);
  return root;
}

export function writeSkillFile(root: string, relative: string, content: string): string {
  const file = path.join(root, relative);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
  return file;
}

export function removeSkillTree(root: string): void {
  rmSync(root, { recursive: true, force: true });
}

/** A skill page with the given frontmatter lines (YAML, verbatim) and body. */
export function skillFile(frontmatter: string, body = ''): string {
  return `---\n${frontmatter.trim()}\n---\n\n${body}`;
}

/** Test support: a logger whose records land in `records` as parsed JSON. */
export function captureLogger(): { logger: Logger; records: Array<Record<string, unknown>> } {
  const records: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) records.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger({ level: 'debug', destination }), records };
}
