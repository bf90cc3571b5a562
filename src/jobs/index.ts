export type {
  EnqueueOptions,
  JobContext,
  JobFailure,
  JobHandler,
  JobQueue,
  QueueDepth,
  QueueOptions,
} from './job-queue.ts';
export { PgBossQueue } from './pg-boss-queue.ts';
