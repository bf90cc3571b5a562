export { Observability, type ObservabilityOptions } from './observability.ts';
