import { realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const OWN_BIN = fileURLToPath(new URL('../../bin/steward.js', import.meta.url));
let cached: { path: string | undefined; command: string } | null = null;

/**
 * How to run Steward from a shell, for every message that tells people what to type: `steward`
 * when that command on the PATH is this installation (npm link, a global install), else
 * `npx steward` (what works in the project folder after npm install).
 */
export function stewardCommand(env: NodeJS.ProcessEnv = process.env): string {
  if (cached && cached.path === env.PATH) return cached.command;
  let command = 'npx steward';
  try {
    const own = realpathSync(OWN_BIN);
    for (const dir of (env.PATH ?? '').split(path.delimiter)) {
      if (!dir) continue;
      try {
        if (realpathSync(path.join(dir, 'steward')) === own) {
          command = 'steward';
          break;
        }
      } catch {
        // no steward there
      }
    }
  } catch {
    // not run from an installation with bin/steward.js
  }
  cached = { path: env.PATH, command };
  return command;
}
