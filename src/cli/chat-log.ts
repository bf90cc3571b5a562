import { Writable } from 'node:stream';
import type { ResolvedConfig } from '../config/index.ts';
import { credentialSecrets } from '../integrations/index.ts';
import { createLogger, type Logger, logFilePath } from '../logging/index.ts';

/** pino's numeric levels: warn and above are worth a line on the terminal. */
const WARN = 40;

/**
 * The log of a chat running in this process: while the chat owns the terminal, log lines go
 * to the server's log file (`<data dir>/logs/steward.log`, read by `steward logs`; nowhere when
 * `logs.file` is off), never over its progress line. `notice()` is the one line the chat shows instead, when warnings or
 * errors were logged since it was last asked.
 */
export function chatLog(config: ResolvedConfig): { logger: Logger; notice(): string | null } {
  let warnings = 0;
  let errors = 0;
  const counter = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) {
        const level = /"level":(\d+)/.exec(line)?.[1];
        if (level === undefined) continue;
        if (Number(level) >= 50) errors++;
        else if (Number(level) >= WARN) warnings++;
      }
      done();
    },
  });
  const { logs } = config;
  const logger = createLogger({
    level: config.log_level,
    secrets: () => [...config.secrets, ...credentialSecrets()],
    destination: counter,
    file: logs.file
      ? {
          file: logFilePath(config.dataDir),
          maxBytes: logs.max_file_mb * 1024 * 1024,
          maxFiles: logs.max_files,
        }
      : undefined,
  });
  return {
    logger,
    notice() {
      if (warnings + errors === 0) return null;
      const counts = [
        errors ? `${errors} error${errors === 1 ? '' : 's'}` : '',
        warnings ? `${warnings} warning${warnings === 1 ? '' : 's'}` : '',
      ].filter(Boolean);
      warnings = 0;
      errors = 0;
      return logs.file
        ? `(${counts.join(' and ')} logged meanwhile: npx steward logs shows them)`
        : `(${counts.join(' and ')} logged meanwhile, not kept: logs.file is off)`;
    },
  };
}
