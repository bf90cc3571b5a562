// Run by `npm install` / `npm ci` (postinstall), on the Node 24 that the `node` dependency
// brought. Nothing here may fail the install: each step says what it could not do.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildPgliteTemplate } from '../src/db/build-template.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/**
 * The `node` package ships Node's C/C++ headers (67 MB) for building native addons against it.
 * Steward has none (its database is WebAssembly) and node-gyp fetches headers of its own, so
 * they are removed: the largest single saving in node_modules.
 */
function removeNodeHeaders(): void {
  const platforms = path.join(ROOT, 'node_modules', 'node', 'node_modules');
  if (!existsSync(platforms)) return;
  for (const name of readdirSync(platforms)) {
    if (!name.startsWith('node-')) continue;
    const headers = path.join(platforms, name, 'include');
    if (existsSync(headers)) rmSync(headers, { recursive: true, force: true });
  }
}

try {
  removeNodeHeaders();
} catch (error) {
  process.stderr.write(`steward: could not remove Node's C headers (${(error as Error).message})\n`);
}
try {
  const file = await buildPgliteTemplate();
  process.stdout.write(`steward: embedded database template ready (${file})\n`);
} catch (error) {
  process.stderr.write(
    `steward: could not prepare the database template (${(error as Error).message}); the first start will be slower\n`,
  );
}
