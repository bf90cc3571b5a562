import { type ResolvedConfig, stewardCommand } from '../config/index.ts';
import { credentialSecrets } from '../integrations/index.ts';
import { createLogger, logFilePath } from '../logging/index.ts';
import { createRuntime } from '../runtime.ts';
import { assertCanListen, assertSafeBinding, isLoopbackHost, listen, OWNER_USER } from '../server/index.ts';
import { createLoginCode, dashboardBase, loginLink } from '../web/index.ts';

/**
 * `steward start`: owns the data dir, applies migrations, serves HTTP, watches the config
 * file and the skill roots, and on SIGTERM/SIGINT drains: new requests get 503, running turns
 * finish (or are interrupted after a grace period and answered as such), then it exits.
 */
export async function startCommand(initial: ResolvedConfig): Promise<void> {
  assertSafeBinding(initial.host, initial.api_token);
  await assertCanListen({ host: initial.host, port: initial.port });
  // How long a stop lets running turns finish before interrupting them (they resume after a restart).
  const TURN_GRACE_MS = initial.shutdown_grace_seconds * 1000;
  let secrets = initial.secrets;
  const { logs } = initial;
  const logger = createLogger({
    level: initial.log_level,
    secrets: () => [...secrets, ...credentialSecrets()],
    // The server also keeps its log in the data dir, where `steward logs` reads it.
    file: logs.file
      ? {
          file: logFilePath(initial.dataDir),
          maxBytes: logs.max_file_mb * 1024 * 1024,
          maxFiles: logs.max_files,
        }
      : undefined,
  });
  const runtime = await createRuntime(initial, { watch: true, logger, shutdownGraceMs: TURN_GRACE_MS });
  const { config, database, lock } = runtime;
  // The no-open-API-on-a-public-address rule holds at every reload, not only at start.
  config.addGuard((next) =>
    !isLoopbackHost(initial.host) && !next.api_token
      ? `api_token cannot be removed while listening on ${initial.host}: the API would be open to the network. Keep api_token, or set HOST=127.0.0.1 and restart.`
      : null,
  );
  config.onChange((next, previous) => {
    secrets = next.secrets;
    if (
      next.port !== previous.port ||
      next.host !== previous.host ||
      next.database_url !== previous.database_url
    ) {
      logger.warn('host, port and database changes take effect after a restart');
    }
    logger.level = next.log_level;
  });
  const { app, lifecycle } = await runtime.http();
  let server: Awaited<ReturnType<typeof listen>>;
  try {
    server = await listen(app, { host: initial.host, port: initial.port, apiToken: initial.api_token });
  } catch (error) {
    await runtime.close();
    throw error;
  }
  lock?.setPort(server.port);
  logger.info(
    { url: `http://${server.host}:${server.port}`, database: database.backend, vector: database.hasVector },
    'Steward is listening',
  );
  // The one-time dashboard link goes to the terminal only, never to the log.
  const code = await createLoginCode(database, { userId: OWNER_USER, owner: true });
  const base = initial.public_url ?? dashboardBase(server.host, server.port);
  process.stdout.write(
    `Dashboard: ${loginLink(base, code)} (one-time login link, valid 10 minutes; \`${stewardCommand()} dashboard\` prints a new one)\n`,
  );
  if (initial.endpoint.provider === 'none') {
    logger.warn(
      `No LLM is configured: chat answers with setup instructions. Run \`${stewardCommand()} onboard\`, or set OPENROUTER_API_KEY, or LLM_BASE_URL (+ LLM_API_KEY) and LLM_MODEL.`,
    );
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'stopping now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing running turns');
    // Still listening while turns finish: every new request, webhooks included, gets 503 with
    // Retry-After (platforms redeliver, load balancers move on), never a refused connection.
    lifecycle.startDraining();
    // Running turns finish, or are interrupted after the grace period and answered as such.
    await runtime.engine.shutdown(TURN_GRACE_MS);
    await lifecycle.idle(5_000);
    await server.close(5_000);
    await runtime.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
