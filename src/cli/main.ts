import { Command, CommanderError, Option } from 'commander';
import { ConfigError } from '../errors.ts';
import { type ChatOptions, chatCommand } from './chat.ts';
import { CliExit, describeFailure, EXIT_ERROR, EXIT_USAGE, loadConfigOrExit } from './common.ts';
import { doctorCommand } from './doctor.ts';
import { migrateCommand } from './migrate.ts';
import { runCommand } from './run.ts';
import { skillsList, skillsNew, skillsShow, skillsValidate } from './skills.ts';
import { startCommand } from './start.ts';

const DEFAULT_USER = 'local';

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

program
  .command('run')
  .description('execute one skill command (or get_skill …) without any LLM')
  .argument('<command>', "the command, e.g. 'tasks.search --query report'")
  .option('--user <id>', 'act as this user', DEFAULT_USER)
  .option('--json', 'print {status, content, metadata}')
  .action(async (command: string, options: { user: string; json?: boolean }) =>
    runCommand(loadConfigOrExit(), command, options),
  );

program
  .command('chat')
  .description('talk to Steward from the terminal (interactive, or --once "text")')
  .option('--once <text>', 'send one message, print the reply and exit')
  .option('--user <id>', 'act as this user', DEFAULT_USER)
  .option('--conversation <id>', 'continue this conversation (default: your latest on the terminal)')
  .option('--new', 'start a new conversation')
  .addOption(
    new Option('--mode <mode>', "set the conversation's agent mode from now on").choices([
      'multi_agent',
      'single_loop',
      'direct',
    ]),
  )
  .option('--json', 'with --once: print {reply, conversationId, turnId, usage}')
  .action(async (options: ChatOptions) => chatCommand(loadConfigOrExit(), options));

const skills = program.command('skills').description('list, show, validate and create skill files');
skills
  .command('list')
  .description('every loaded skill: name, access, source, description')
  .option('--json', 'print JSON')
  .action((options: { json?: boolean }) => skillsList(loadConfigOrExit(), options));
skills
  .command('show')
  .description('the page get_skill serves for a domain or skill')
  .argument('<name>', 'a domain (tasks), a skill (tasks.create) or domain.all')
  .action((name: string) => skillsShow(loadConfigOrExit(), name));
skills
  .command('validate')
  .description('report every diagnostic; exit 1 on any error')
  .argument('[dir]', 'a skills root (default: the built-in and user roots)')
  .action((dir: string | undefined) => skillsValidate(loadConfigOrExit(), dir));
skills
  .command('new')
  .description('write a valid page skeleton into the user skills dir')
  .argument('<name>', 'DOMAIN.ACTION')
  .action((name: string) => skillsNew(loadConfigOrExit(), name));

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
