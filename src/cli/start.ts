import { ConfigStore, type ResolvedConfig } from '../config/index.ts';
import { openDatabase } from '../db/index.ts';
import { createLogger } from '../logging/logger.ts';
import { createServerApp } from '../server/app.ts';
import { assertSafeBinding, listen } from '../server/listen.ts';

/**
 * `steward start`: owns the data dir, applies migrations, serves HTTP, watches the config
 * file, and shuts down gracefully on SIGTERM/SIGINT.
 */
export async function startCommand(initial: ResolvedConfig): Promise<void> {
  const store = new ConfigStore(initial);
  const logger = createLogger({ level: initial.log_level, secrets: () => store.get().secrets });
  assertSafeBinding(initial.host, initial.api_token);
  const { database, lock } = await openDatabase(initial);
  const app = createServerApp({ database, logger, config: () => store.get() });
  let server: Awaited<ReturnType<typeof listen>>;
  try {
    server = await listen(app, { host: initial.host, port: initial.port, apiToken: initial.api_token });
  } catch (error) {
    await database.close();
    lock?.release();
    throw error;
  }
  lock?.setPort(server.port);
  store.watch(logger);
  store.onChange((next, previous) => {
    if (
      next.port !== previous.port ||
      next.host !== previous.host ||
      next.database_url !== previous.database_url
    ) {
      logger.warn('host, port and database changes take effect after a restart');
    }
    logger.level = next.log_level;
  });
  logger.info(
    { url: `http://${server.host}:${server.port}`, database: database.backend, vector: database.hasVector },
    'Steward is listening',
  );
  if (initial.endpoint.provider === 'none') {
    logger.warn(
      'No LLM is configured: chat answers with setup instructions. Set OPENROUTER_API_KEY, or LLM_BASE_URL (+ LLM_API_KEY) and LLM_MODEL.',
    );
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    store.close();
    await server.close();
    await database.close();
    lock?.release();
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}
