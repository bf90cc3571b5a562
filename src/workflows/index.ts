export { runView, scheduleApiRoutes } from './api-routes.ts';
export type { DeliveryAttempt, DeliveryReceipt, DeliveryStatus } from './delivery-receipt.ts';
export type { RunStatus, RunTrigger, WorkflowRun } from './run-store.ts';
export { runsOf } from './run-store.ts';
export {
  DEFAULT_CATCH_UP_SECONDS,
  type DeclaredSchedule,
  type RunWithDelivery,
  type SchedulerDeps,
  type ScheduleView,
  WORKFLOW_RUN_JOB,
  WorkflowScheduler,
} from './scheduler.ts';
export { SCHEDULED_CHANNEL } from './workflow-runner.ts';
