// Run by `npm install` (postinstall): prepares the embedded database template so that the
// first `npm start` on a new data dir is quick. Failing here never fails the install.
import { buildPgliteTemplate } from './pglite-template.ts';

try {
  const file = await buildPgliteTemplate();
  process.stdout.write(`steward: embedded database template ready (${file})\n`);
} catch (error) {
  process.stderr.write(
    `steward: could not prepare the database template (${(error as Error).message}); first start will be slower\n`,
  );
}
