import { createInterface } from 'node:readline/promises';
import {
  CHANNEL_NAMES,
  CHANNEL_SETUP,
  type ChannelStatus,
  channelsStatus,
  createChannelAdapters,
  normalizePairingCode,
  type PairingRequest,
  parseIdentity,
  pendingPairings,
} from '../channels/index.ts';
import type { ResolvedConfig } from '../config/index.ts';
import { silentLogger } from '../logging/index.ts';
import { createRuntime } from '../runtime.ts';
import { getUser, setPrimaryChannel, userIdProblem } from '../users/index.ts';
import { CliExit, EXIT_ERROR, EXIT_OK, EXIT_USAGE, stewardInvocation } from './common.ts';
import { callServer, remoteServer, withDatabase } from './remote.ts';

/* `steward channels`, `steward pairing list|approve`, `steward users link`: through the server's
   API when one owns the embedded data dir, else on the database directly. */

async function remoteCall<T>(
  config: ResolvedConfig,
  method: 'GET' | 'POST',
  path: string,
  body?: object,
): Promise<T | null> {
  const remote = remoteServer(config);
  return remote ? callServer<T>(remote, 'steward', method, `/api${path}`, body) : null;
}

const when = (value: Date | string | null) =>
  value ? new Date(value).toISOString().replace('T', ' ').slice(0, 19) : 'never';

/** The lines `steward channels` prints for one channel. */
export function describeChannel(status: ChannelStatus): string[] {
  const name = status.channel.padEnd(11);
  if (!status.configured) {
    return [
      `${name}off — to use it, ${CHANNEL_SETUP[status.channel]}`,
      ...status.problems.map((problem) => `           problem: ${problem}`),
    ];
  }
  const lines = [
    `${name}on (${status.mode})  last in ${when(status.lastInboundAt)}  last out ${when(status.lastOutboundAt)}  ` +
      `backlog ${status.backlog}  failed ${status.failed}  ambiguous ${status.ambiguous}  refused webhooks ${status.rejected}`,
  ];
  if (status.mode === 'webhook') {
    lines.push(
      `           webhook URL: ${status.webhookUrl ?? '(set STEWARD_PUBLIC_URL to see the URL to register)'}`,
    );
  }
  if (status.lastRejection) lines.push(`           last refused webhook: ${status.lastRejection}`);
  for (const problem of status.problems) lines.push(`           problem: ${problem}`);
  return lines;
}

export async function channelsCommand(config: ResolvedConfig, options: { json?: boolean }): Promise<void> {
  const remote = await remoteCall<{ channels: ChannelStatus[] }>(config, 'GET', '/channels');
  const statuses =
    remote?.channels ??
    (await withDatabase(config, async (database) => {
      const { adapters, problems } = await createChannelAdapters(config, silentLogger());
      return channelsStatus(database, config, {
        configured: adapters.map((adapter) => adapter.name),
        modes: Object.fromEntries(adapters.map((adapter) => [adapter.name, adapter.mode ?? 'webhook'])),
        problems,
      });
    }));
  process.stdout.write(
    options.json
      ? `${JSON.stringify(statuses, null, 2)}\n`
      : `${statuses.flatMap(describeChannel).join('\n')}\n`,
  );
  throw new CliExit(EXIT_OK);
}

export async function pairingListCommand(config: ResolvedConfig, options: { json?: boolean }): Promise<void> {
  const remote = await remoteCall<{ pending: PairingRequest[] }>(config, 'GET', '/pairing');
  const pending =
    remote?.pending ?? (await withDatabase(config, (database) => pendingPairings(database, new Date())));
  if (options.json) {
    process.stdout.write(`${JSON.stringify(pending, null, 2)}\n`);
  } else if (pending.length === 0) {
    process.stdout.write('No pending pairing requests.\n');
  } else {
    const lines = ['CODE      CHANNEL     SENDER                  NAME                  EXPIRES'];
    for (const request of pending) {
      const minutes = Math.max(0, Math.round((new Date(request.expiresAt).getTime() - Date.now()) / 60_000));
      lines.push(
        `${request.code}  ${request.channel.padEnd(10)}  ${request.senderId.padEnd(22)}  ${(request.senderName ?? '').padEnd(20)}  in ${minutes} min`,
      );
    }
    const steward = stewardInvocation();
    lines.push(
      '',
      `Approve one with: ${steward} pairing approve CODE`,
      `  as a new user, or joined to an existing one (its memory, tasks and history): ${steward} pairing approve CODE --as USER  (--as local: you)`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  throw new CliExit(EXIT_OK);
}

/**
 * On a terminal, when the owner has no chat identity yet, a pairing is likely the owner's own
 * phone: ask, so it joins the owner instead of becoming a stranger with empty memory.
 */
async function askIfOwner(request: PairingRequest | undefined): Promise<string | undefined> {
  if (!process.stdin.isTTY || !request) return undefined;
  const who = `${request.channel}:${request.senderId}${request.senderName ? ` (${request.senderName})` : ''}`;
  const reader = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answer = await reader.question(
      `The owner has no chat identity yet. Is ${who} you? Then it shares your memory, tasks and history. [y/N] `,
    );
    return /^y(es)?$/i.test(answer.trim()) ? 'local' : undefined;
  } finally {
    reader.close();
  }
}

export async function pairingApproveCommand(
  config: ResolvedConfig,
  code: string,
  options: { as?: string } = {},
): Promise<void> {
  type Approved = { approved: string; channel: string; sender: string; user: string };
  if (options.as !== undefined) {
    const problem = userIdProblem(options.as);
    if (problem) throw new CliExit(EXIT_USAGE, `steward pairing approve: --as: ${problem}`);
  }
  let joinTo = options.as;
  const remote = remoteServer(config);
  if (remote && joinTo === undefined && process.stdin.isTTY) {
    const listed = await remoteCall<{ pending: PairingRequest[]; owner_paired: boolean }>(
      config,
      'GET',
      '/pairing',
    );
    if (listed && !listed.owner_paired)
      joinTo = await askIfOwner(
        listed.pending.find((request) => request.code === normalizePairingCode(code)),
      );
  }
  let approved = remote
    ? await remoteCall<Approved>(config, 'POST', '/pairing/approve', {
        code,
        ...(joinTo ? { as: joinTo } : {}),
      })
    : null;
  if (!approved) {
    const runtime = await createRuntime(config, { logger: silentLogger() });
    try {
      if (joinTo === undefined && process.stdin.isTTY && !(await runtime.channels.ownerPaired())) {
        const pending = await pendingPairings(runtime.database, runtime.channels.now());
        joinTo = await askIfOwner(pending.find((request) => request.code === normalizePairingCode(code)));
      }
      const outcome = await runtime.channels.approvePairing(code, { as: joinTo });
      if (!outcome.ok) throw new CliExit(EXIT_ERROR, `steward pairing approve: ${outcome.problem}`);
      approved = {
        approved: outcome.request.code,
        channel: outcome.request.channel,
        sender: outcome.request.senderId,
        user: outcome.userId,
      };
      // No server is running: greet now (a greeting that cannot go out waits in the outbox).
      await Promise.race([
        runtime.channels.sender.flush(),
        new Promise((resolve) => setTimeout(resolve, 15_000).unref()),
      ]);
    } finally {
      await runtime.close();
    }
  }
  const identity = `${approved.channel}:${approved.sender}`;
  const steward = stewardInvocation();
  process.stdout.write(
    joinTo
      ? `Approved ${approved.approved}: ${identity} joined the user ${approved.user} and shares its memory, tasks and history; Steward greets them.\n`
      : `Approved ${approved.approved}: ${identity} is now the user ${approved.user}; Steward greets them.\n` +
          `If ${identity} belongs to someone who already has a user here (local is you, the owner), join it to them: ${steward} users link ${identity} USER\n` +
          `(next time: ${steward} pairing approve CODE --as USER)\n`,
  );
  throw new CliExit(EXIT_OK);
}

export async function usersLinkCommand(
  config: ResolvedConfig,
  identity: string,
  user: string,
): Promise<void> {
  const parsed = parseIdentity(identity);
  if (!parsed)
    throw new CliExit(
      EXIT_USAGE,
      `steward users link: "${identity}" is not CHANNEL:SENDER, e.g. telegram:12345`,
    );
  const problem = userIdProblem(user);
  if (problem) throw new CliExit(EXIT_USAGE, `steward users link: ${problem}`);
  const remote = await remoteCall(config, 'POST', '/users/link', { identity, user });
  if (!remote) {
    const runtime = await createRuntime(config, { logger: silentLogger() });
    try {
      await runtime.channels.linkSender(parsed.channel, parsed.senderId, user);
    } finally {
      await runtime.close();
    }
  }
  process.stdout.write(
    `Linked ${parsed.channel}:${parsed.senderId} to the user ${user}: their messages now share ${user}'s memory, tasks and history.\n`,
  );
  throw new CliExit(EXIT_OK);
}

export async function usersPrimaryCommand(
  config: ResolvedConfig,
  user: string,
  channel: string | undefined,
): Promise<void> {
  const chosen = channel === undefined || channel === 'auto' ? null : channel;
  if (chosen !== null && !(CHANNEL_NAMES as readonly string[]).includes(chosen)) {
    throw new CliExit(
      EXIT_USAGE,
      `steward users primary: "${chosen}" is not a channel; use ${CHANNEL_NAMES.join(', ')} or auto`,
    );
  }
  const remote = await remoteCall(config, 'POST', '/users/primary', { user, channel: chosen });
  if (!remote) {
    await withDatabase(config, async (database) => {
      if (!(await getUser(database, user)))
        throw new CliExit(EXIT_ERROR, `steward users primary: no user ${user}`);
      await setPrimaryChannel(database, user, chosen);
    });
  }
  process.stdout.write(
    chosen
      ? `Deliveries for ${user} now go to ${chosen}.\n`
      : `Deliveries for ${user} go to the channel they last wrote from.\n`,
  );
  throw new CliExit(EXIT_OK);
}
