import { writeFileSync } from 'node:fs';
import { exportJWK, exportPKCS8, generateKeyPair, type JWK, SignJWT } from 'jose';
import { type FakeHttp, type FakeReply, startFakeHttp } from './fake-http.ts';

/*
 * A fake of Google's side of a Chat app: the JWKS for chat@system.gserviceaccount.com (and
 * signing of the bearer tokens Chat sends), the OAuth token endpoint for service accounts,
 * and the Chat API's spaces.messages.create.
 */

export const FAKE_PROJECT_NUMBER = '1234567890';
const CHAT_ISSUER = 'chat@system.gserviceaccount.com';

export type ChatPost = { space: string; text: string; thread?: string; name: string };

export type FakeGoogleChat = FakeHttp & {
  readonly jwksUrl: string;
  readonly posts: ChatPost[];
  /** Access tokens issued to the service account. */
  readonly tokensIssued: number;
  /** A bearer token as Chat would send it; overrides make it wrong (stale, other audience, other key). */
  signToken(overrides?: {
    audience?: string;
    issuer?: string;
    expiresInSeconds?: number;
    foreignKey?: boolean;
  }): Promise<string>;
  /** Writes a service-account JSON key whose token_uri is this fake; returns its path. */
  writeServiceAccount(path: string): Promise<string>;
  failNext(...replies: FakeReply[]): void;
  /** Scripted answers for the next calls of the OAuth token endpoint. */
  failToken(...replies: FakeReply[]): void;
};

export async function startFakeGoogleChat(): Promise<FakeGoogleChat> {
  const chatKeys = await generateKeyPair('RS256', { extractable: true });
  const foreign = await generateKeyPair('RS256', { extractable: true });
  const account = await generateKeyPair('RS256', { extractable: true });
  const publicJwk: JWK = {
    ...(await exportJWK(chatKeys.publicKey)),
    kid: 'chat-key-1',
    alg: 'RS256',
    use: 'sig',
  };
  const posts: ChatPost[] = [];
  const scripted: FakeReply[] = [];
  const scriptedTokens: FakeReply[] = [];
  let tokens = 0;
  let seq = 1;
  const http = await startFakeHttp((request) => {
    if (request.path === '/jwks') return { status: 200, json: { keys: [publicJwk] } };
    if (request.path === '/token') {
      if (scriptedTokens.length) return scriptedTokens.shift()!;
      if (
        request.body?.grant_type !== 'urn:ietf:params:oauth:grant-type:jwt-bearer' ||
        !request.body.assertion
      ) {
        return { status: 400, json: { error: 'invalid_grant' } };
      }
      tokens++;
      return {
        status: 200,
        json: { access_token: `ya29.fake-${tokens}`, expires_in: 3600, token_type: 'Bearer' },
      };
    }
    const match = /^\/v1\/(spaces\/[^/]+)\/messages$/.exec(request.path);
    if (request.method === 'POST' && match) {
      if (!/^Bearer ya29\.fake-\d+$/.test(request.headers.authorization ?? '')) {
        return {
          status: 401,
          json: { error: { code: 401, message: 'Request had invalid authentication credentials.' } },
        };
      }
      if (scripted.length) return scripted.shift()!;
      const body = (request.body ?? {}) as { text?: string; thread?: { name?: string } };
      const name = `${match[1]}/messages/fake${seq++}.fake`;
      posts.push({
        space: match[1]!,
        text: String(body.text),
        ...(body.thread?.name ? { thread: body.thread.name } : {}),
        name,
      });
      return { status: 200, json: { name, text: body.text } };
    }
    return { status: 404, json: { error: { code: 404, message: 'Not found' } } };
  });
  return {
    ...http,
    jwksUrl: `${http.url}/jwks`,
    posts,
    get tokensIssued() {
      return tokens;
    },
    signToken: async (overrides = {}) => {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ email: CHAT_ISSUER, email_verified: true })
        .setProtectedHeader({ alg: 'RS256', kid: 'chat-key-1', typ: 'JWT' })
        .setIssuer(overrides.issuer ?? CHAT_ISSUER)
        .setAudience(overrides.audience ?? FAKE_PROJECT_NUMBER)
        .setIssuedAt(now - 5)
        .setExpirationTime(now + (overrides.expiresInSeconds ?? 3600))
        .sign(overrides.foreignKey ? foreign.privateKey : chatKeys.privateKey);
    },
    writeServiceAccount: async (path) => {
      writeFileSync(
        path,
        JSON.stringify({
          type: 'service_account',
          project_id: 'steward-test',
          private_key_id: 'fake-key-id',
          private_key: await exportPKCS8(account.privateKey),
          client_email: 'steward@steward-test.iam.gserviceaccount.com',
          token_uri: `${http.url}/token`,
        }),
      );
      return path;
    },
    failNext: (...replies) => scripted.push(...replies),
    failToken: (...replies) => scriptedTokens.push(...replies),
  };
}
