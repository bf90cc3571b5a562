import type { SkillHandler } from '../../types.ts';
import { deleteFileHandler } from './delete.ts';
import { listFilesHandler } from './list.ts';
import { moveFileHandler } from './move.ts';
import { readFileHandler } from './read.ts';
import { restoreFileHandler } from './restore.ts';
import { searchFilesHandler } from './search.ts';
import { syncFilesHandler } from './sync.ts';
import { fileVersionsHandler } from './versions.ts';
import { writeFileHandler } from './write.ts';

/** The built-in handlers of the `files` domain, registered under their skill names. */
export const fileHandlers: SkillHandler[] = [
  listFilesHandler,
  readFileHandler,
  searchFilesHandler,
  writeFileHandler,
  moveFileHandler,
  deleteFileHandler,
  fileVersionsHandler,
  restoreFileHandler,
  syncFilesHandler,
];
