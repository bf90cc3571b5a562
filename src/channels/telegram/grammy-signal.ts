import type { Api } from 'grammy';

type GrammySignal = NonNullable<Parameters<Api['getMe']>[0]>;

/** grammy types its signals with the `abort-controller` polyfill; at run time it takes a native one. */
export function grammySignal(signal: AbortSignal): GrammySignal {
  return signal as unknown as GrammySignal;
}
