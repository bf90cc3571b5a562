export { ensureUser, isValidTimezone, systemTimezone, type User, userIdProblem } from './users.ts';
