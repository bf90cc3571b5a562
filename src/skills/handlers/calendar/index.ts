import type { SkillHandler } from '../../types.ts';
import { freeTimeHandler, getEventHandler, listEventsHandler } from './read.ts';
import {
  calendarFeedHandler,
  calendarFeedRotateHandler,
  createEventHandler,
  deleteEventHandler,
  updateEventHandler,
} from './write.ts';

/** The built-in handlers of the `calendar` domain. */
export const calendarHandlers: SkillHandler[] = [
  listEventsHandler,
  getEventHandler,
  createEventHandler,
  updateEventHandler,
  deleteEventHandler,
  freeTimeHandler,
  calendarFeedHandler,
  calendarFeedRotateHandler,
] as SkillHandler[];
