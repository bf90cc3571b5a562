export { type SpendAlert, SpendGuard, type SpendGuardOptions } from './spend-guard.ts';
