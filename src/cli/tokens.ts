import type { ResolvedConfig } from '../config/index.ts';
import { createApiToken, ensureUser, listApiTokens, revokeApiToken, userIdProblem } from '../users/index.ts';
import { CliExit, EXIT_ERROR, EXIT_USAGE, stewardInvocation } from './common.ts';
import { callServer, remoteServer, withDatabase } from './remote.ts';

/** `steward tokens create --user ID [--name N]`: prints the new token once. */
export async function tokensCreate(
  config: ResolvedConfig,
  options: { user: string; name?: string },
): Promise<void> {
  const problem = userIdProblem(options.user);
  if (problem) throw new CliExit(EXIT_USAGE, `steward tokens create: ${problem}`);
  const remote = remoteServer(config);
  const created = remote
    ? ((await callServer(remote, 'steward tokens', 'POST', '/api/tokens', {
        user: options.user,
        name: options.name,
      })) as {
        id: string;
        token: string;
      })
    : await withDatabase(config, async (db) => {
        await ensureUser(db, options.user);
        const made = await createApiToken(db, options.user, options.name ?? null);
        return { id: made.record.id, token: made.token };
      });
  process.stdout.write(
    `${created.token}\n(token ${created.id} for user ${options.user}: shown only now; it acts only as that user)\n`,
  );
}

/** `steward tokens list [--user ID]`: ids, users and when each was last used — never the tokens. */
export async function tokensList(
  config: ResolvedConfig,
  options: { user?: string; json?: boolean },
): Promise<void> {
  const remote = remoteServer(config);
  const query = options.user ? `?user=${encodeURIComponent(options.user)}` : '';
  const tokens = remote
    ? ((await callServer(remote, 'steward tokens', 'GET', `/api/tokens${query}`)) as { tokens: unknown[] })
        .tokens
    : await withDatabase(config, (db) => listApiTokens(db, options.user));
  if (options.json) {
    process.stdout.write(`${JSON.stringify(tokens, null, 2)}\n`);
    return;
  }
  const rows = tokens as Array<{
    id: string;
    userId: string;
    name: string | null;
    lastUsedAt: string | Date | null;
    revokedAt: string | Date | null;
  }>;
  if (rows.length === 0)
    process.stdout.write(`No tokens. Create one with: ${stewardInvocation()} tokens create --user ID\n`);
  for (const row of rows) {
    const state = row.revokedAt
      ? 'revoked'
      : row.lastUsedAt
        ? `last used ${new Date(row.lastUsedAt).toISOString()}`
        : 'never used';
    process.stdout.write(`${row.id}  ${row.userId}  ${row.name ?? ''}  ${state}\n`);
  }
}

/** `steward tokens revoke ID`. */
export async function tokensRevoke(config: ResolvedConfig, id: string): Promise<void> {
  const remote = remoteServer(config);
  let revoked = true;
  if (remote) await callServer(remote, 'steward tokens', 'DELETE', `/api/tokens/${encodeURIComponent(id)}`);
  else revoked = await withDatabase(config, (db) => revokeApiToken(db, id));
  if (!revoked)
    throw new CliExit(
      EXIT_ERROR,
      `steward tokens revoke: no active token ${id} (see ${stewardInvocation()} tokens list)`,
    );
  process.stdout.write(`revoked ${id}\n`);
}
