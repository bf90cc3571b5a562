export { CHANNEL_NAMES, type ChannelName } from './channel-names.ts';
export { ENV_VARS, type LlmEndpoint, loadConfig, type ResolvedConfig, type SettingSource } from './load.ts';
export { BUILTIN_SKILLS_DIR, builtinSkillDomains, isSecretName, resolveMcpServers } from './mcp-servers.ts';
export {
  type AlertsConfig,
  type LogsConfig,
  SEVERITIES,
  type Severity,
  type SpendConfig,
  type TracingConfig,
} from './observability-schema.ts';
export { pendingRestart, pendingRestartCheck, RESTART_SETTINGS } from './pending-restart.ts';
export { modelFor, OPENROUTER_BASE_URL, type Roster, resolveRoster, unknownModel } from './roster.ts';
export {
  type ChannelMode,
  type ChannelsConfig,
  type Config,
  configSchema,
  type Limits,
  type McpServerConfig,
  type ModelSpec,
  ROLES,
  type Role,
  type RoleSpec,
  TIERS,
  type VoiceConfig,
  type WebConfig,
} from './schema.ts';
export { stewardCommand } from './steward-command.ts';
export { ConfigStore } from './store.ts';
