import { createHmac, timingSafeEqual } from 'node:crypto';

/** Slack refuses to trust requests older than this, and so does Steward (replay protection). */
export const SLACK_MAX_AGE_SECONDS = 5 * 60;

/** `v0=` + HMAC-SHA256 of `v0:{timestamp}:{raw body}` with the signing secret. */
export function slackSignature(secret: string, timestamp: string, body: Uint8Array | string): string {
  const hmac = createHmac('sha256', secret);
  hmac.update(`v0:${timestamp}:`);
  hmac.update(body);
  return `v0=${hmac.digest('hex')}`;
}

/** The header checks: a signature of the right shape and a timestamp within five minutes. */
export function slackHeaderProblem(headers: Headers, now: Date): string | null {
  const timestamp = headers.get('x-slack-request-timestamp');
  const signature = headers.get('x-slack-signature');
  if (!timestamp || !signature) return 'missing signature';
  if (!/^v0=[0-9a-f]{64}$/.test(signature) || !/^\d{1,12}$/.test(timestamp)) return 'malformed signature';
  if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > SLACK_MAX_AGE_SECONDS) return 'stale timestamp';
  return null;
}

/** Constant-time check of the signature over the raw body. */
export function slackSignatureMatches(secret: string, headers: Headers, body: Uint8Array): boolean {
  const expected = Buffer.from(slackSignature(secret, headers.get('x-slack-request-timestamp') ?? '', body));
  const given = Buffer.from(headers.get('x-slack-signature') ?? '');
  return expected.length === given.length && timingSafeEqual(expected, given);
}
