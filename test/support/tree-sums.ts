import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Every file below `dir` with its sha256, by path relative to it (none when `dir` is missing). */
export function treeSums(dir: string): Record<string, string> {
  const sums: Record<string, string> = {};
  if (!existsSync(dir)) return sums;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    sums[path.relative(dir, full)] = createHash('sha256').update(readFileSync(full)).digest('hex');
  }
  return sums;
}
