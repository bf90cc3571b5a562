import { Hono } from 'hono';
import type { ResolvedConfig } from '../config/index.ts';
import { createLogger } from '../logging/logger.ts';
import { createRuntime } from '../runtime.ts';
import { chatRoutes } from '../server/api-chat.ts';
import { runRoutes } from '../server/api-run.ts';
import { createServerApp } from '../server/app.ts';
import { assertSafeBinding, listen } from '../server/listen.ts';

/**
 * `steward start`: owns the data dir, applies migrations, serves HTTP, watches the config
 * file and the skill roots, and shuts down gracefully on SIGTERM/SIGINT.
 */
export async function startCommand(initial: ResolvedConfig): Promise<void> {
  assertSafeBinding(initial.host, initial.api_token);
  let secrets = initial.secrets;
  const logger = createLogger({ level: initial.log_level, secrets: () => secrets });
  const runtime = await createRuntime(initial, { watch: true, logger });
  const { config, database, lock } = runtime;
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
  await runtime.engine.recoverInterrupted();
  const api = new Hono();
  api.route('/', runRoutes(runtime));
  api.route('/', chatRoutes({ engine: runtime.engine, database }));
  const app = createServerApp({ database, logger, config: () => config.get(), api });
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
    await server.close();
    await runtime.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}
