export type { EnqueueOptions, JobContext, JobHandler, JobQueue, QueueOptions } from './job-queue.ts';
export { PgBossQueue } from './pg-boss-queue.ts';
