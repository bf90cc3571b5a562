import { readFileSync } from 'node:fs';
import { type Context, Hono } from 'hono';

/** Scripts, styles and the icon, read from the package at first use (no CDN). */
const ASSETS: Record<string, string> = {
  'app.css': 'text/css; charset=utf-8',
  'chat.js': 'text/javascript; charset=utf-8',
  'turn.js': 'text/javascript; charset=utf-8',
  'logs.js': 'text/javascript; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
};

const cache = new Map<string, string>();
function asset(name: string): string {
  let text = cache.get(name);
  if (text === undefined) {
    text = readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8');
    cache.set(name, text);
  }
  return text;
}

export function assetRoutes(): Hono {
  const app = new Hono();
  const serve = (name: string) => (c: Context) => {
    c.header('Content-Type', ASSETS[name]!);
    c.header('Cache-Control', 'public, max-age=3600');
    c.header('X-Content-Type-Options', 'nosniff');
    return c.body(asset(name));
  };
  app.get('/favicon.ico', serve('favicon.svg'));
  app.get('/favicon.svg', serve('favicon.svg'));
  for (const name of Object.keys(ASSETS)) app.get(`/assets/${name}`, serve(name));
  return app;
}
