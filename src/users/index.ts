export {
  ensureUser,
  getUser,
  isValidTimezone,
  systemTimezone,
  type User,
  updateUser,
  userIdProblem,
} from './users.ts';
