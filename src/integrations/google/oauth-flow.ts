import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { StewardError } from '../../errors.ts';
import type { GoogleCredentials } from '../credentials/credential-types.ts';
import { GOOGLE_SCOPES, googleEndpoints } from './google-auth.ts';

export type OAuthFlowOptions = {
  clientId: string;
  clientSecret: string;
  apiUrl?: string;
  /** Shows the consent URL to the user (the CLI prints it). */
  showUrl: (url: string) => void;
  signal?: AbortSignal;
  timeoutMs?: number;
};

/**
 * The OAuth installed-app flow with a loopback redirect (RFC 8252): a one-shot HTTP server on
 * 127.0.0.1 receives the code, checked against `state`, exchanged with PKCE for a refresh token.
 */
export async function runGoogleOAuthFlow(
  options: OAuthFlowOptions,
): Promise<GoogleCredentials & { kind: 'oauth' }> {
  const endpoints = googleEndpoints(options.apiUrl);
  const state = randomBytes(16).toString('base64url');
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  let settle!: { resolve: (code: string) => void; reject: (error: Error) => void };
  const codeArrived = new Promise<string>((resolve, reject) => {
    settle = { resolve, reject };
  });
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/oauth2callback') {
      response.writeHead(404).end();
      return;
    }
    const error = url.searchParams.get('error');
    const code = url.searchParams.get('code');
    if (url.searchParams.get('state') !== state || (!code && !error)) {
      response
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('This sign-in link is not the one Steward started. Run steward connect google again.');
      return;
    }
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end(
      error
        ? `Google said: ${error}. You can close this tab.`
        : 'Steward is connected. You can close this tab.',
    );
    if (error)
      settle.reject(
        new StewardError(
          'oauth_denied',
          `Google refused the sign-in (${error}). Run steward connect google again and allow access.`,
        ),
      );
    else settle.resolve(code!);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const redirectUri = `http://127.0.0.1:${port}/oauth2callback`;
  const { OAuth2Client } = await import('google-auth-library');
  const client = new OAuth2Client({
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    redirectUri,
    endpoints: { oauth2TokenUrl: endpoints.tokenUrl, oauth2AuthBaseUrl: endpoints.authUrl },
  });
  const timer = setTimeout(
    () =>
      settle.reject(
        new StewardError('oauth_timeout', 'No sign-in arrived in time. Run steward connect google again.'),
      ),
    options.timeoutMs ?? 5 * 60_000,
  );
  const onAbort = () => settle.reject(new StewardError('oauth_cancelled', 'Cancelled.'));
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    options.showUrl(
      client.generateAuthUrl({
        access_type: 'offline',
        prompt: 'consent',
        scope: GOOGLE_SCOPES,
        state,
        code_challenge: challenge,
        code_challenge_method: 'S256' as never,
      }),
    );
    const code = await codeArrived;
    const { tokens } = await client.getToken({ code, codeVerifier: verifier, redirect_uri: redirectUri });
    if (!tokens.refresh_token) {
      throw new StewardError(
        'oauth_no_refresh_token',
        'Google did not return a refresh token. Remove Steward from https://myaccount.google.com/permissions and run steward connect google again.',
      );
    }
    return {
      kind: 'oauth',
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      refreshToken: tokens.refresh_token,
      scopes: (tokens.scope ?? GOOGLE_SCOPES.join(' ')).split(' '),
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    server.close();
  }
}
