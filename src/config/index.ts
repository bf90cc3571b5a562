export { ENV_VARS, type LlmEndpoint, loadConfig, type ResolvedConfig, type SettingSource } from './load.ts';
export { modelFor, OPENROUTER_BASE_URL, type Roster, resolveRoster, unknownModel } from './roster.ts';
export {
  type ChannelMode,
  type Config,
  configSchema,
  type Limits,
  type ModelSpec,
  ROLES,
  type Role,
  type RoleSpec,
  TIERS,
} from './schema.ts';
export { ConfigStore } from './store.ts';
