import { Hono } from 'hono';
import { type Database, pendingMigrations } from '../db/index.ts';
import { errorMessage } from '../errors.ts';

/** `/healthz`: the process answers. `/readyz`: the database answers and every migration is applied. */
export function healthRoutes(database: Database): Hono {
  const app = new Hono();
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    try {
      await database.query('SELECT 1');
      const pending = await pendingMigrations(database);
      if (pending.length > 0) {
        return c.json({ status: 'not_ready', reason: `pending migrations: ${pending.join(', ')}` }, 503);
      }
      return c.json({ status: 'ready', database: database.backend, vector: database.hasVector });
    } catch (error) {
      return c.json({ status: 'not_ready', reason: `database unreachable: ${errorMessage(error)}` }, 503);
    }
  });
  return app;
}
