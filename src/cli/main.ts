import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { stewardCommand } from '../config/index.ts';
import { ConfigError } from '../errors.ts';
import type { ChatOptions } from './chat.ts';
import { CliExit, describeFailure, EXIT_ERROR, EXIT_USAGE, loadConfigOrExit } from './common.ts';
import type { ConnectOptions } from './connect.ts';
import type { LogsOptions } from './logs.ts';
import type { MemoryImportOptions } from './memory.ts';
import type { OnboardOptions } from './onboard.ts';
import { flagOf, ONBOARD_CHANNELS } from './onboard-questions.ts';
import type { SchedulesOptions } from './schedules.ts';
import type { SecurityAuditOptions } from './security.ts';
import type { SkillsHistoryOptions, SkillsRollbackOptions } from './skills.ts';
import type { SkillsImportOptions } from './skills-import.ts';
import type { UsageOptions } from './usage.ts';

/*
 * Each command's module is loaded when the command runs: `steward run` does not pay for the
 * server, the channels or MCP, and `--help` pays for none of them.
 */

const DEFAULT_USER = 'local';
const SERVICE_CHOICES = ['systemd', 'launchd', 'none'];

/** `steward run tasks.search --query x` split the command into words: show it quoted. */
function quoteHint(words: string[]): string {
  const command = words.map((word) => (/[\s']/.test(word) ? `"${word}"` : word)).join(' ');
  return `hint: quote the whole command, e.g. ${stewardCommand()} run '${command}'`;
}

const program = new Command()
  .name('steward')
  .description('Steward: a headless, skills-first, multi-agent personal assistant')
  .version(
    (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
      .version,
    '-V, --version',
  )
  .exitOverride();

program
  .command('start')
  .description('serve the HTTP API on the configured database (embedded by default)')
  .action(async () => (await import('./start.ts')).startCommand(loadConfigOrExit()));

const onboard = program
  .command('onboard')
  .description(
    'guided set-up: LLM, owner token, chat channels, service; writes .env (mode 600) and steward.yaml',
  )
  .option('--non-interactive', 'ask nothing: every answer from its flag (or its default)')
  .option('--llm-base-url <url>', 'OpenAI-compatible endpoint (default https://openrouter.ai/api/v1)')
  .option('--llm-api-key <key>', 'its API key (none for a local server)')
  .option('--llm-model <model>', 'the model every chat role uses')
  .option('--owner-token <token>', 'STEWARD_API_TOKEN (default: keep the one in .env, else a random one)')
  .option('--public-url <url>', 'the https URL platforms send webhooks to (turns Telegram to webhook mode)')
  .addOption(
    new Option('--telegram-mode <mode>', 'how Telegram messages arrive').choices(['webhook', 'polling']),
  )
  .option(
    '--telegram-webhook-secret <secret>',
    'the secret Telegram sends with each update (default: a random one)',
  )
  .addOption(
    new Option('--service <kind>', 'install a service that runs steward start').choices(SERVICE_CHOICES),
  );
for (const setup of ONBOARD_CHANNELS) {
  for (const field of setup.fields)
    onboard.option(`${flagOf(field.env)} <value>`, `${setup.label}: ${field.env}`);
}
onboard.action(async (options: OnboardOptions) => (await import('./onboard.ts')).onboardCommand(options));

program
  .command('migrate')
  .description('apply pending database migrations and exit')
  .action(async () => (await import('./migrate.ts')).migrateCommand(loadConfigOrExit()));

program
  .command('doctor')
  .description('check the configuration, database, LLM, every enabled channel and provider, with fixes')
  .option(
    '--fix',
    'apply the safe fixes first: file modes, missing folders, Steward’s own webhook registration',
  )
  .action(async (options: { fix?: boolean }) =>
    (await import('./doctor.ts')).doctorCommand(loadConfigOrExit(), options),
  );

program
  .command('run')
  .description('execute one skill command (or get_skill …) without any LLM')
  .argument('<command>', "the command, e.g. 'tasks.search --query report'")
  .option('--user <id>', 'act as this user', DEFAULT_USER)
  .option('--json', 'print {status, content, metadata}')
  .action(async (command: string, options: { user: string; json?: boolean }) =>
    (await import('./run.ts')).runCommand(loadConfigOrExit(), command, options),
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
  .action(async (options: ChatOptions) =>
    (await import('./chat.ts')).chatCommand(loadConfigOrExit(), options),
  );

program
  .command('dashboard')
  .description('print a one-time login link to the web dashboard (valid 10 minutes)')
  .option('--user <id>', 'log in as this user (default: the owner)', DEFAULT_USER)
  .action(async (options: { user: string }) =>
    (await import('./dashboard.ts')).dashboardCommand(loadConfigOrExit(), options),
  );

program
  .command('usage')
  .description('tokens, cached share and cost per day (UTC), user and model')
  .option('--days <n>', 'how many days back, today included', '30')
  .option('--user <id>', 'only this user')
  .option(
    '--json',
    'print {"days": [{date, user, model, calls, prompt_tokens, cached_tokens, completion_tokens, cost_usd}]}',
  )
  .action(async (options: UsageOptions) =>
    (await import('./usage.ts')).usageCommand(loadConfigOrExit(), options),
  );

const schedules = program
  .command('schedules')
  .description('scheduled workflows: name, cron, zone, next run, last run and status')
  .option('--user <id>', "only this user's schedules")
  .option('--json', 'print [{name, skill, user, schedule, timezone, next_run, last_run, last_status, …}]')
  .action(async (options: SchedulesOptions) =>
    (await import('./schedules.ts')).schedulesCommand(loadConfigOrExit(), options),
  );
schedules
  .command('run')
  .description('run a workflow now and wait for it (exit 1 unless it ended ok)')
  .argument('<name>', 'the workflow, e.g. daily_digest or workflows.daily_digest')
  .option('--user <id>', "only this user's workflows")
  .option('--json', 'print the run')
  // `schedules` has the same options: whichever of the two took them, they apply to `run`.
  .action(async (name: string, _options: SchedulesOptions, command: Command) =>
    (await import('./schedules.ts')).schedulesRunCommand(
      loadConfigOrExit(),
      name,
      command.optsWithGlobals<SchedulesOptions>(),
    ),
  );

program
  .command('logs')
  .description("the server's log (<data dir>/logs/steward.log), pretty-printed")
  .option('-n, --lines <n>', 'how many of the last lines to show', '50')
  .option('-f, --follow', 'keep printing new lines as they are written')
  .option('--json', 'print the raw JSON lines')
  .action(async (options: LogsOptions) =>
    (await import('./logs.ts')).logsCommand(loadConfigOrExit(), options),
  );

program
  .command('mcp')
  .description('serve Steward to MCP hosts (Claude Desktop, Cursor) over stdio: get_skill and run')
  .option('--user <id>', 'act as this user', DEFAULT_USER)
  .action(async (options: { user: string }) =>
    (await import('./mcp.ts')).mcpCommand(loadConfigOrExit(), options),
  );

program
  .command('connect')
  .description('connect an account for a user: google, email (IMAP/SMTP), hubspot or caldav')
  .argument('<provider>', 'google, email, hubspot or caldav')
  .option('--user <id>', 'connect it for this user', DEFAULT_USER)
  .option('--client-id <id>', 'google: OAuth client id of a Desktop app (or GOOGLE_CLIENT_ID)')
  .option('--client-secret <secret>', 'google: OAuth client secret (or GOOGLE_CLIENT_SECRET)')
  .option('--service-account <file>', 'google: service account key (domain-wide delegation)')
  .option('--impersonate <email>', 'google: the Workspace user the service account acts as')
  .option('--imap <url>', 'email: imaps://user:pass@host[:port] (imap:// for plain)')
  .option('--smtp <url>', 'email: smtps://user:pass@host[:port] (smtp:// for plain)')
  .option('--from <address>', 'email: sender, addr or "Name <addr>"')
  .option('--token <token>', 'hubspot: private app access token')
  .option('--base-url <url>', 'hubspot: API root (default HUBSPOT_BASE_URL or HubSpot)')
  .option('--url <url>', 'caldav: server URL')
  .option('--username <name>', 'caldav: user name')
  .option('--password <password>', 'caldav: (app) password')
  .action(async (provider: string, options: ConnectOptions) =>
    (await import('./connect.ts')).connectCommand(loadConfigOrExit(), provider, options),
  );

program
  .command('disconnect')
  .description("forget a user's stored account: google, email, hubspot or caldav")
  .argument('<provider>', 'google, email, hubspot or caldav')
  .option('--user <id>', 'for this user', DEFAULT_USER)
  .action(async (provider: string, options: { user: string }) =>
    (await import('./connect.ts')).disconnectCommand(loadConfigOrExit(), provider, options),
  );

const tokens = program.command('tokens').description('per-user API tokens (stored hashed)');
tokens
  .command('create')
  .description('make a token that acts only as one user; printed once')
  .requiredOption('--user <id>', 'the user the token acts as')
  .option('--name <name>', 'a label, e.g. the device it is for')
  .action(async (options: { user: string; name?: string }) =>
    (await import('./tokens.ts')).tokensCreate(loadConfigOrExit(), options),
  );
tokens
  .command('list')
  .description('tokens (ids, users, last use; never the tokens themselves)')
  .option('--user <id>', 'only this user')
  .option('--json', 'print JSON')
  .action(async (options: { user?: string; json?: boolean }) =>
    (await import('./tokens.ts')).tokensList(loadConfigOrExit(), options),
  );
tokens
  .command('revoke')
  .description('stop a token from working')
  .argument('<id>', 'the token id (tok_…) from steward tokens list')
  .action(async (id: string) => (await import('./tokens.ts')).tokensRevoke(loadConfigOrExit(), id));

const skills = program
  .command('skills')
  .description('list, show, validate and create skill files; history and rollback of learned skills');
skills
  .command('list')
  .description('every loaded skill: name, access, source, runs, failures, last use, description')
  .option('--json', 'print [{name, description, readonly, source, owner, runs, failures, last_used}]')
  .action(async (options: { json?: boolean }) =>
    (await import('./skills.ts')).skillsList(loadConfigOrExit(), options),
  );
skills
  .command('show')
  .description('the page get_skill serves for a domain or skill')
  .argument('<name>', 'a domain (tasks), a skill (tasks.create) or domain.all')
  .action(async (name: string) => (await import('./skills.ts')).skillsShow(loadConfigOrExit(), name));
skills
  .command('validate')
  .description('report every diagnostic; exit 1 on any error')
  .argument('[dir]', 'a skills root (default: the built-in and user roots)')
  .action(async (dir: string | undefined) =>
    (await import('./skills.ts')).skillsValidate(loadConfigOrExit(), dir),
  );
skills
  .command('history')
  .description('every version of a learned skill: when, who, why (and the diffs with --diff)')
  .argument('<name>', 'the learned skill, e.g. travel.plan_trip')
  .option('--user <id>', 'whose skill (default: the one user who has it)')
  .option('--json', 'print [{version, at, author, reason}]')
  .option('--diff', "show each version's changes")
  .action(async (name: string, options: SkillsHistoryOptions) =>
    (await import('./skills.ts')).skillsHistory(loadConfigOrExit(), name, options),
  );
skills
  .command('rollback')
  .description('write an earlier version of a learned skill back as a new version (restores a retired one)')
  .argument('<name>', 'the learned skill, e.g. travel.plan_trip')
  .requiredOption('--to <version>', 'the version to go back to (see steward skills history)')
  .option('--user <id>', 'whose skill (default: the one user who has it)')
  .option('--reason <text>', 'why, kept in the history')
  .action(async (name: string, options: SkillsRollbackOptions) =>
    (await import('./skills.ts')).skillsRollback(loadConfigOrExit(), name, options),
  );
skills
  .command('new')
  .description('write a valid page skeleton into the user skills dir')
  .argument('<name>', 'DOMAIN.ACTION')
  .action(async (name: string) => (await import('./skills.ts')).skillsNew(loadConfigOrExit(), name));

program
  .command('channels')
  .description('each chat channel: on or off, webhook URL to register, last traffic, backlog, failures')
  .option('--json', 'print JSON')
  .action(async (options: { json?: boolean }) =>
    (await import('./channels.ts')).channelsCommand(loadConfigOrExit(), options),
  );

const pairing = program.command('pairing').description('admit unknown senders who asked for access');
pairing
  .command('list')
  .description('pending pairing codes')
  .option('--json', 'print JSON')
  .action(async (options: { json?: boolean }) =>
    (await import('./channels.ts')).pairingListCommand(loadConfigOrExit(), options),
  );
pairing
  .command('approve')
  .description('admit the sender behind a code (Steward greets them)')
  .argument('<code>', 'the 8-character code the sender received')
  .option(
    '--as <user>',
    'join the sender to this existing user instead of making a new one (local: you, the owner)',
  )
  .action(async (code: string, options: { as?: string }) =>
    (await import('./channels.ts')).pairingApproveCommand(loadConfigOrExit(), code, options),
  );

const users = program.command('users').description('users and their channel identities');
users
  .command('link')
  .description("join a channel identity to a user: it shares that user's memory, tasks and history")
  .argument(
    '<identity>',
    'CHANNEL:SENDER, e.g. telegram:12345, signal:+4915112345678 or email:ana@example.com',
  )
  .argument('<user>', 'the Steward user, e.g. local')
  .action(async (identity: string, user: string) =>
    (await import('./channels.ts')).usersLinkCommand(loadConfigOrExit(), identity, user),
  );
users
  .command('primary')
  .description(
    "the channel deliveries (reminders, alerts) go to; 'auto' (default): where the user last wrote from",
  )
  .argument('<user>', 'the Steward user')
  .argument('[channel]', 'telegram, slack, whatsapp, googlechat, discord, matrix, signal, email or auto')
  .action(async (user: string, channel: string | undefined) =>
    (await import('./channels.ts')).usersPrimaryCommand(loadConfigOrExit(), user, channel),
  );

program
  .command('backup')
  .description('write one archive of the database, files (every version), skills and a manifest')
  .option('--output <file>', 'where (default: ./steward-backup-<time>-manual.tar.gz)')
  .action(async (options: { output?: string }) =>
    (await import('./data.ts')).backupCommand(loadConfigOrExit(), options),
  );

program
  .command('restore')
  .description('bring a backup back into an empty data dir or database (checks it first)')
  .argument('<file>', 'a backup written by steward backup')
  .option('--force', 'replace data already there (it is kept aside under <data dir>/backups)')
  .action(async (file: string, options: { force?: boolean }) =>
    (await import('./data.ts')).restoreCommand(loadConfigOrExit(), file, options),
  );

program
  .command('export')
  .description("one user's data: tasks, memories, conversations, files, skills, identities")
  .requiredOption('--user <id>', 'the user')
  .requiredOption('--output <dir>', 'a new or empty folder')
  .action(async (options: { user: string; output: string }) =>
    (await import('./data.ts')).exportCommand(loadConfigOrExit(), options),
  );

users
  .command('delete')
  .description('delete a user and every row and file of theirs (not the owner)')
  .argument('<user>', 'the Steward user')
  .option('--yes', 'do not ask for confirmation')
  .action(async (user: string, options: { yes?: boolean }) =>
    (await import('./data.ts')).usersDeleteCommand(loadConfigOrExit(), user, options),
  );

program
  .command('memory')
  .description("the user's memory and past conversations")
  .command('import')
  .description(
    'bring in a chat history: JSONL, ChatGPT conversations.json, WhatsApp .txt, Telegram result.json',
  )
  .argument('<file>', 'the exported file')
  .option('--user <id>', 'import for this user', DEFAULT_USER)
  .option('--format <format>', 'jsonl, chatgpt, whatsapp or telegram (default: told by the file)')
  .option('--timezone <zone>', "the zone the export's local times were written in (default: this machine's)")
  .option('--json', 'print {format, added, duplicates, conversations, skipped}')
  .action(async (file: string, options: MemoryImportOptions) =>
    (await import('./memory.ts')).memoryImportCommand(loadConfigOrExit(), file, options),
  );

program
  .command('security')
  .description('security checks of this installation')
  .command('audit')
  .description('check the configuration like a reviewer: exit 1 on any high or critical finding')
  .option('--json', 'print [{id, severity, message, fix}]')
  .option('--fix', 'apply the safe fixes first (file modes of .env, the data dir and key files)')
  .option(
    '--deep',
    'also probe the running server: routes open without a token, security headers, TLS in front',
  )
  .action(async (options: SecurityAuditOptions) =>
    (await import('./security.ts')).securityAuditCommand(loadConfigOrExit(), options),
  );

skills
  .command('import')
  .description(
    'turn AgentSkills folders (SKILL.md + files) into template skills; shows findings, runs nothing',
  )
  .argument('<path>', 'an AgentSkills folder, or a folder of them')
  .option('--domain <name>', 'the skill domain they go under', 'agentskills')
  .option('--dry-run', 'only show what would be added')
  .option('--force', 'also import skills with dangerous findings, replacing existing files')
  .option('--json', 'print one object per skill')
  .action(async (source: string, options: SkillsImportOptions) =>
    (await import('./skills-import.ts')).skillsImport(loadConfigOrExit(), source, options),
  );

/** After a usage error: one line pointing at `--help` for that command, not the whole help. */
function pointAtHelp(command: Command, words: string[]): void {
  const name = [...words, command.name()].join(' ');
  command.showHelpAfterError(`Run '${name} --help' for usage.`);
  for (const sub of command.commands) pointAtHelp(sub, [...words, command.name()]);
}
pointAtHelp(program, []);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    const unquoted = error.code === 'commander.unknownOption' || error.code === 'commander.excessArguments';
    if (unquoted && process.argv[2] === 'run') process.stderr.write(`${quoteHint(process.argv.slice(3))}\n`);
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
