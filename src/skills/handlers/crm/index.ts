import type { SkillHandler } from '../../types.ts';
import {
  createContactHandler,
  getContactHandler,
  searchContactsHandler,
  updateContactHandler,
} from './contacts.ts';
import { addNoteHandler, searchDealsHandler, updateDealHandler } from './deals.ts';

/** The built-in handlers of the `crm` domain (HubSpot). */
export const crmHandlers: SkillHandler[] = [
  searchContactsHandler,
  getContactHandler,
  createContactHandler,
  updateContactHandler,
  searchDealsHandler,
  updateDealHandler,
  addNoteHandler,
] as SkillHandler[];
