import { Command, CommanderError } from 'commander';
import { ConfigError } from '../errors.ts';
import { CliExit, describeFailure, EXIT_ERROR, EXIT_USAGE, loadConfigOrExit } from './common.ts';
import { doctorCommand } from './doctor.ts';
import { migrateCommand } from './migrate.ts';
import { startCommand } from './start.ts';

const program = new Command()
  .name('steward')
  .description('Steward: a headless, skills-first, multi-agent personal assistant')
  .showHelpAfterError()
  .exitOverride();

program
  .command('start')
  .description('serve the HTTP API on the configured database (embedded by default)')
  .action(async () => startCommand(loadConfigOrExit()));

program
  .command('migrate')
  .description('apply pending database migrations and exit')
  .action(async () => migrateCommand(loadConfigOrExit()));

program
  .command('doctor')
  .description('check the configuration, database and LLM endpoint, with fixes')
  .action(async () => doctorCommand(loadConfigOrExit()));

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    const ok =
      error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0;
    process.exit(ok ? 0 : EXIT_USAGE);
  }
  if (error instanceof CliExit) {
    if (error.message) process.stderr.write(`${error.message}\n`);
    process.exit(error.exitCode);
  }
  if (error instanceof ConfigError) {
    process.stderr.write(`steward: invalid configuration: ${error.message}\n`);
    process.exit(EXIT_USAGE);
  }
  process.stderr.write(`steward: ${describeFailure(error)}\n`);
  process.exit(EXIT_ERROR);
}
