import type { ResolvedConfig } from '../config/index.ts';
import { openDatabase } from '../db/index.ts';
import { ensureUser, userIdProblem } from '../users/index.ts';
import { createLoginCode, dashboardBase, loginLink } from '../web/index.ts';
import { CliExit, EXIT_ERROR, EXIT_USAGE } from './common.ts';
import { remoteServer } from './remote.ts';

/** `steward dashboard [--user ID]`: prints a new one-time login link (valid 10 minutes). */
export async function dashboardCommand(config: ResolvedConfig, options: { user: string }): Promise<void> {
  const problem = userIdProblem(options.user);
  if (problem) throw new CliExit(EXIT_USAGE, `steward dashboard: ${problem}`);
  const remote = remoteServer(config);
  let code: string;
  let base = config.public_url ?? dashboardBase(config.host, config.port);
  if (remote) {
    const response = await fetch(`${remote.url}/api/dashboard/login-link`, {
      method: 'POST',
      headers: remote.headers,
      body: JSON.stringify({ user: options.user }),
    });
    const answer = (await response.json().catch(() => ({}))) as { code?: string; message?: string };
    if (!response.ok || !answer.code) {
      throw new CliExit(
        EXIT_ERROR,
        `steward dashboard: the server answered ${response.status}: ${answer.message ?? ''}`,
      );
    }
    code = answer.code;
    if (!config.public_url) base = remote.url;
  } else {
    const { database, lock } = await openDatabase(config);
    try {
      await ensureUser(database, options.user);
      code = await createLoginCode(database, { userId: options.user, owner: options.user === 'local' });
    } finally {
      await database.close();
      lock?.release();
    }
  }
  process.stdout.write(
    `${loginLink(base, code)}\n(one-time login link for ${options.user}, valid 10 minutes)\n`,
  );
}
