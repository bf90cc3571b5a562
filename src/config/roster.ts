import type { Config, ModelSpec, Role, RoleSpec } from './schema.ts';
import { ROLES } from './schema.ts';

export const OPENROUTER_BASE_URL = 'https://openrouter.ai/api/v1';

/** Used when OpenRouter is configured and steward.yaml names no models. Prices: USD per million tokens. */
const OPENROUTER_DEFAULT_MODELS: ModelSpec[] = [
  {
    id: 'anthropic/claude-sonnet-4.5',
    tier: 'primary',
    context_window: 200_000,
    pricing: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
    tools: true,
  },
  {
    id: 'anthropic/claude-haiku-4.5',
    tier: 'fast',
    context_window: 200_000,
    pricing: { input: 1, output: 5, cache_read: 0.1, cache_write: 1.25 },
    tools: true,
  },
  {
    id: 'openai/gpt-5-mini',
    tier: 'cheap',
    context_window: 400_000,
    pricing: { input: 0.25, output: 2, cache_read: 0.025, cache_write: 0 },
    tools: true,
  },
  {
    id: 'openai/text-embedding-3-small',
    tier: 'cheap',
    context_window: 8_192,
    pricing: { input: 0.02, output: 0, cache_read: 0, cache_write: 0 },
    tools: false,
  },
];

/** No `transcription`: it defaults to the orchestrator's model, whatever that is. */
const OPENROUTER_DEFAULT_ROLES: Partial<Record<Role, RoleSpec>> = {
  orchestrator: { model: 'anthropic/claude-sonnet-4.5', fallbacks: ['openai/gpt-5-mini'] },
  sub_agent: { model: 'anthropic/claude-haiku-4.5', fallbacks: ['openai/gpt-5-mini'] },
  compaction: { model: 'anthropic/claude-haiku-4.5', fallbacks: ['openai/gpt-5-mini'] },
  sentinel: { model: 'openai/gpt-5-mini', fallbacks: ['anthropic/claude-haiku-4.5'] },
  embeddings: { model: 'openai/text-embedding-3-small', fallbacks: [] },
};

export type Roster = {
  models: ReadonlyMap<string, ModelSpec>;
  roles: Partial<Record<Role, RoleSpec>>;
};

/** A model the roster does not describe: unknown price (0) and a conservative context window. */
export function unknownModel(id: string): ModelSpec {
  return {
    id,
    tier: 'balanced',
    context_window: 32_000,
    pricing: { input: 0, output: 0, cache_read: 0, cache_write: 0 },
    tools: true,
  };
}

/**
 * The roster in force: the configured models and roles, completed with OpenRouter defaults
 * when OpenRouter is the endpoint. Every model a role names is in `models`.
 */
export function resolveRoster(llm: Config['llm'], isOpenRouter: boolean): Roster {
  const models = new Map<string, ModelSpec>();
  const baseModels = llm.models.length === 0 && isOpenRouter ? OPENROUTER_DEFAULT_MODELS : llm.models;
  for (const model of baseModels) models.set(model.id, model);
  const roles: Partial<Record<Role, RoleSpec>> = {};
  for (const role of ROLES) {
    const spec =
      llm.roles[role] ??
      (isOpenRouter ? OPENROUTER_DEFAULT_ROLES[role] : undefined) ??
      // Speech to text defaults to the orchestrator's model (and its fallbacks).
      (role === 'transcription' ? roles.orchestrator : undefined);
    if (!spec) continue;
    roles[role] = spec;
    for (const id of [spec.model, ...spec.fallbacks]) if (!models.has(id)) models.set(id, unknownModel(id));
  }
  return { models, roles };
}

export function modelFor(roster: Roster, id: string): ModelSpec {
  return roster.models.get(id) ?? unknownModel(id);
}
