import { statSync } from 'node:fs';
import path from 'node:path';
import type { Diagnostic } from '../types.ts';
import { loadSkillRoots } from './load-skill-roots.ts';

/** Every diagnostic for one skills directory, for `steward skills validate [DIR]`. */
export function validateSkillDir(dir: string): Diagnostic[] {
  const root = path.resolve(dir);
  let isDirectory = false;
  try {
    isDirectory = statSync(root).isDirectory();
  } catch {
    isDirectory = false;
  }
  if (!isDirectory) return [{ path: root, severity: 'error', message: 'not a directory' }];
  return [...loadSkillRoots([{ dir: root, source: 'user' }]).diagnostics];
}
