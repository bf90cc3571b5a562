import { type FileFailure, type FilesService, normalizeUserPath } from '../../../files/index.ts';
import { fenceExternal } from '../../external.ts';
import { fail, type SkillContext, type SkillResult } from '../../types.ts';

/** The files service, or the error result a process without one gives. */
export function filesOf(ctx: SkillContext): FilesService | SkillResult {
  return ctx.services.files ?? fail('Files are not available in this Steward process.');
}

export const isResult = (value: unknown): value is SkillResult =>
  typeof value === 'object' && value !== null && 'status' in value && 'content' in value;

export const failWith = (failure: FileFailure): SkillResult =>
  fail(failure.message, { metadata: { code: failure.code } });

/** `file:<path>` as a fence source: characters a source cannot hold are percent-encoded. */
export function fileSource(userPath: string): string {
  return `file:${userPath.replace(/[\s"<>%]/g, (char) => encodeURIComponent(char)).slice(0, 200)}`;
}

export const fenceFile = (userPath: string, text: string) => fenceExternal(fileSource(userPath), text);

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** The path as the vault stores it (`./a//b.md` → `a/b.md`), or the error result for a bad one. */
export function cleanPath(input: string): string | SkillResult {
  const checked = normalizeUserPath(input);
  return checked.ok ? checked.path : fail(checked.message, { metadata: { code: 'invalid_path' } });
}
