export {
  type ApiToken,
  createApiToken,
  hashToken,
  listApiTokens,
  revokeApiToken,
  userOfApiToken,
} from './api-tokens.ts';
export {
  type ChannelIdentity,
  findIdentity,
  identitiesByPreference,
  linkIdentity,
  listIdentities,
  noteIdentityActivity,
  primaryIdentity,
  setPrimaryChannel,
} from './identities.ts';
export {
  ensureUser,
  ensureUserWith,
  getUser,
  listUserIds,
  systemTimezone,
  type User,
  updateUser,
  userIdProblem,
} from './users.ts';
export { parseVoiceReplies, setVoiceReplies, type VoiceReplies, voiceRepliesOf } from './voice-replies.ts';
