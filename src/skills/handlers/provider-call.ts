import { type Integrations, type Lookup, ProviderError } from '../../integrations/index.ts';
import type { SkillContext, SkillResult } from '../types.ts';
import { fail } from '../types.ts';

/** The integrations service; its absence is a wiring bug, not a user error. */
export function integrationsOf(ctx: SkillContext): Integrations {
  const integrations = ctx.services.integrations;
  if (!integrations) throw new Error('integrations are not wired into the skill services');
  return integrations;
}

/**
 * Runs `work` with the user's provider. Not connected → an error result saying how to connect.
 * The user's own problems (revoked access, unknown item, rejected values) → error results;
 * the provider's failures (down, 429, garbage) propagate, so the executor's breaker counts them.
 */
export async function withProvider<P>(
  lookup: Promise<Lookup<P>>,
  work: (provider: P) => Promise<SkillResult>,
): Promise<SkillResult> {
  const found = await lookup;
  if (!found.ok) return fail(found.reason, { metadata: { notConnected: true } });
  try {
    return await work(found.provider);
  } catch (error) {
    if (error instanceof ProviderError && !error.infrastructure) {
      return fail(error.message, { metadata: { provider: error.provider, issue: error.issue } });
    }
    throw error;
  } finally {
    const closable = found.provider as { close?: () => Promise<void> };
    await closable.close?.().catch(() => undefined);
  }
}
