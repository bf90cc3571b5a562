import { errorMessage } from '../errors.ts';
import type { ChannelProbe } from './types.ts';

/** The words of a failed call: client libraries wrap the fetch error (grammy in `error`, Slack in `original`). */
export function callFailure(error: unknown): string {
  const inner =
    (error as { error?: unknown } | null)?.error ?? (error as { original?: unknown } | null)?.original;
  return inner instanceof Error ? errorMessage(inner) : errorMessage(error);
}

/** A probe whose call got no answer from the platform at all (refused, DNS, TLS, timeout). */
export function unreachable(api: string, where: string, error: unknown, setting: string): ChannelProbe {
  return {
    ok: false,
    problem: `${api} at ${where} does not answer: ${callFailure(error)}`,
    fix: `check that ${where} is reachable from this machine (network, proxy, firewall) and ${setting}`,
  };
}

/** Waits at most `ms` for a probe, so one platform that hangs never holds doctor up. */
export async function probeWithin(
  probe: (signal: AbortSignal) => Promise<ChannelProbe>,
  ms: number,
): Promise<ChannelProbe> {
  const signal = AbortSignal.timeout(ms);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<ChannelProbe>((resolve) => {
    timer = setTimeout(
      () => resolve({ ok: false, problem: `no answer within ${ms / 1000} s`, fix: 'check the network' }),
      ms + 500,
    );
  });
  try {
    return await Promise.race([probe(signal), late]);
  } catch (error) {
    return { ok: false, problem: errorMessage(error), fix: 'check the network' };
  } finally {
    clearTimeout(timer);
  }
}
