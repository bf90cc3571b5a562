import { Hono } from 'hono';
import type { WebEnv } from '../layout.ts';
import { requireCsrf, requireSession } from '../login.ts';
import { channelRoutes } from './channels.ts';
import { chatRoutes } from './chat.ts';
import { inboxRoutes } from './inbox.ts';
import { logRoutes } from './logs.ts';
import { memoryRoutes } from './memories.ts';
import type { PageDeps } from './page-deps.ts';
import { scheduleRoutes } from './schedules.ts';
import { skillRoutes } from './skills.ts';
import { taskRoutes } from './tasks.ts';
import { turnRoutes } from './turns.ts';
import { usageRoutes } from './usage.ts';

export { WEB_CHANNEL } from './chat.ts';
export type { PageDeps } from './page-deps.ts';

/** The dashboard's pages, each behind a session and (for posts) the CSRF check. */
export function pageRoutes(deps: PageDeps): Hono<WebEnv> {
  const app = new Hono<WebEnv>();
  const guard = requireSession(deps.database);
  const csrf = requireCsrf();
  for (const path of [
    '/',
    '/chat',
    '/chat/*',
    '/turns',
    '/turns/*',
    '/skills',
    '/skills/*',
    '/tasks',
    '/tasks/*',
    '/memories',
    '/memories/*',
    '/schedules',
    '/schedules/*',
    '/inbox',
    '/inbox/*',
    '/channels',
    '/channels/*',
    '/usage',
    '/logs',
    '/logs/*',
  ]) {
    app.use(path, guard, csrf);
  }

  app.get('/', (c) => c.redirect('/chat', 302));
  for (const routes of [
    chatRoutes,
    turnRoutes,
    skillRoutes,
    taskRoutes,
    memoryRoutes,
    scheduleRoutes,
    inboxRoutes,
    channelRoutes,
    usageRoutes,
    logRoutes,
  ])
    app.route('/', routes(deps));
  return app;
}
