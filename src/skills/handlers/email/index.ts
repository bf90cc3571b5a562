import type { SkillHandler } from '../../types.ts';
import { saveAttachmentsHandler } from './attachments.ts';
import { archiveEmailHandler, labelEmailHandler } from './organize.ts';
import { readEmailHandler, searchEmailHandler } from './read.ts';
import { draftEmailHandler, replyEmailHandler, sendEmailHandler } from './send.ts';

/** The built-in handlers of the `email` domain. */
export const emailHandlers: SkillHandler[] = [
  searchEmailHandler,
  readEmailHandler,
  sendEmailHandler,
  replyEmailHandler,
  draftEmailHandler,
  archiveEmailHandler,
  labelEmailHandler,
  saveAttachmentsHandler,
] as SkillHandler[];
