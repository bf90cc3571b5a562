/** The chat channels Steward speaks on: the prefix of their identities (`telegram:4242`). */
export const CHANNEL_NAMES = [
  'telegram',
  'slack',
  'whatsapp',
  'googlechat',
  'discord',
  'matrix',
  'signal',
  'email',
] as const;
export type ChannelName = (typeof CHANNEL_NAMES)[number];
