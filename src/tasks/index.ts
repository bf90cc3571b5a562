/** The task manager: every function is scoped to one user (DESIGN invariant 9). */
export { type ArchiveResult, archiveTask } from './archive.ts';
export { addComment } from './comments.ts';
export { createTask, type NewTask } from './create.ts';
export {
  listTasksForDashboard,
  TASK_DUE_FILTERS,
  type TaskListFilter,
  type TaskListItem,
  taskOwner,
} from './dashboard.ts';
export {
  addDays,
  DATE_INPUT_FORMS,
  type DateInputResult,
  dateInputError,
  isRealDate,
  localDate,
  parseDateInput,
} from './dates.ts';
export { addDependencies, type DependencyChange, removeDependencies } from './dependencies.ts';
export { activeTasksDueBy, type DueTask } from './due.ts';
export { type DetailOptions, getRecentTasks, getTask, getTasks } from './get.ts';
export type { FieldChange } from './history.ts';
export { getTaskOverview, type TaskOverview } from './overview.ts';
export { nextOccurrence, parseRecurrence, RECURRENCE_FORMS, type RecurrenceResult } from './recurrence.ts';
export { searchTasks, type TaskReadContext, type TaskSearch, type TaskSearchResult } from './search.ts';
export {
  ACTIVE_STATUSES,
  notFoundMessage,
  TASK_PRIORITIES,
  TASK_SORTS,
  TASK_STATUSES,
  type Task,
  type TaskComment,
  type TaskContext,
  type TaskDetail,
  type TaskFailure,
  type TaskHistoryEntry,
  type TaskLink,
  type TaskOutcome,
  type TaskPriority,
  type TaskSort,
  type TaskStatus,
} from './types.ts';
export { type TaskChanges, type TaskUpdate, updateTask } from './update.ts';
