import { extractCommands, parseCommand } from '../src/skills/protocol/index.ts';
import type { BenchSection } from './lib.ts';
import { ms, percentile, sample } from './lib.ts';

/** Commands the way models write them: mostly short lookups, now and then a long email or note. */
const SHORT_COMMANDS = [
  'tasks.search --status overdue --assignee me',
  'get_skill: email',
  'tasks.create --title "Call the bank" --due 2024-03-29 --priority high --tag finance --tag calls',
  "memory.search --query 'flight to Lisbon' --limit 5",
  'calendar.list --from=2024-03-25 --to=2024-03-31 --calendar work personal',
  'files.read notes/2024-03-25.md --lines 40',
];

const LONG_BODY = Array.from(
  { length: 24 },
  (_, line) =>
    `Line ${line + 1}: the Q1 numbers for \\"region ${line}\\" are attached; see the summary below.`,
).join('\\n');
const LONG_COMMANDS = [
  `email.send --to team@co.com bob@co.com --cc finance@co.com --subject "Q1 review, final numbers" --body "${LONG_BODY}" --attach reports/q1.pdf reports/q1.xlsx`,
  `notes.add --title 'Meeting notes' --text '${'We agreed to move the launch to April and to hire two more support staff. '.repeat(20)}' --tags work launch`,
];

function modelReply(targetChars: number): string {
  const turn = [
    "I'll look up your overdue tasks first, then draft the follow-up emails.",
    '',
    '```cmd',
    '# what is late',
    'tasks.search --status overdue --assignee me --sort due_date',
    'calendar.list --from 2024-03-25 --to 2024-03-31',
    '```',
    '',
    'Three tasks are overdue. The oldest is the vendor contract review, due last Tuesday; the other two are',
    'small. I will create a reminder and send Bob a short note with the details so he can pick it up.',
    '',
    '```cmd',
    'tasks.create --title "Review vendor contract" \\',
    '  --due 2024-03-29 \\',
    '  --priority high --tag legal',
    'email.send --to bob@co.com --subject "Vendor contract" --body "Hi Bob,',
    '',
    'Could you take the vendor contract review this week? The draft is in the shared folder.',
    '',
    'Thanks"',
    '```',
    '',
    'Done. Let me know if you want the other two rescheduled as well.',
    '',
  ].join('\n');
  return turn.repeat(Math.ceil(targetChars / turn.length)).slice(0, targetChars);
}

const utf8Bytes = (texts: readonly string[]) => texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);

/** Parses `commands` round-robin `count` times; the checksum keeps the work from being optimized away. */
function timeParses(
  commands: readonly string[],
  count: number,
): { seconds: number; bytes: number; checksum: number } {
  let checksum = 0;
  let bytes = 0;
  const sizes = commands.map((command) => Buffer.byteLength(command));
  const start = performance.now();
  for (let index = 0; index < count; index++) {
    const slot = index % commands.length;
    const result = parseCommand(commands[slot]!);
    if (result.ok) checksum += Object.keys(result.command.flags).length;
    bytes += sizes[slot]!;
  }
  return { seconds: (performance.now() - start) / 1000, bytes, checksum };
}

const rate = (count: number, seconds: number) => Math.round(count / seconds).toLocaleString('en-US');
const megabytesPerSecond = (bytes: number, seconds: number) => (bytes / 1e6 / seconds).toFixed(1);

export default async function commandParseBench(): Promise<BenchSection> {
  const mixed = [
    ...SHORT_COMMANDS,
    ...SHORT_COMMANDS,
    ...SHORT_COMMANDS,
    LONG_COMMANDS[0]!,
    LONG_COMMANDS[1]!,
  ];
  for (const command of [...SHORT_COMMANDS, ...LONG_COMMANDS]) {
    if (!parseCommand(command).ok) throw new Error(`bench command does not parse: ${command.slice(0, 60)}`);
  }
  timeParses(mixed, 20_000); // warm-up

  const workloads: Array<{ name: string; commands: readonly string[]; count: number }> = [
    {
      name: `parseCommand, short (avg ${avgChars(SHORT_COMMANDS)} chars)`,
      commands: SHORT_COMMANDS,
      count: 100_000,
    },
    {
      name: `parseCommand, long (avg ${avgChars(LONG_COMMANDS)} chars)`,
      commands: LONG_COMMANDS,
      count: 20_000,
    },
    { name: 'parseCommand, mix (18 short : 2 long)', commands: mixed, count: 100_000 },
  ];
  const rows: Array<Array<string | number>> = [];
  let checksum = 0;
  for (const workload of workloads) {
    const run = timeParses(workload.commands, workload.count);
    checksum += run.checksum;
    rows.push([
      workload.name,
      workload.count.toLocaleString('en-US'),
      rate(workload.count, run.seconds),
      megabytesPerSecond(run.bytes, run.seconds),
      ms(run.seconds * 1000),
    ]);
  }

  const reply = modelReply(10 * 1024);
  const commandsPerReply = extractCommands(reply).length;
  for (let index = 0; index < 200; index++) extractCommands(reply); // warm-up
  const calls = 2_000;
  const durations = await sample(calls, () => {
    checksum += extractCommands(reply).length;
  });
  const total = durations.reduce((sum, duration) => sum + duration, 0) / 1000;
  rows.push([
    `extractCommands, 10 KB reply (${commandsPerReply} commands)`,
    calls.toLocaleString('en-US'),
    rate(calls * commandsPerReply, total),
    megabytesPerSecond(utf8Bytes([reply]) * calls, total),
    `${ms(total * 1000)} (p50 ${ms(percentile(durations, 50))}, p95 ${ms(percentile(durations, 95))})`,
  ]);

  return {
    title: 'Command parsing',
    description:
      'Throughput of the command protocol (src/skills/protocol) on one thread: parseCommand (tokenize + flag grammar) ' +
      'over short and long commands, and extractCommands (fence scan + split) over a 10 KB model reply. MB = 10^6 bytes of UTF-8 input.',
    columns: ['workload', 'runs', 'commands/s', 'MB/s', 'time'],
    rows,
    notes: [`checksum ${checksum} (keeps the work observable)`],
  };
}

function avgChars(commands: readonly string[]): number {
  return Math.round(commands.reduce((sum, command) => sum + command.length, 0) / commands.length);
}
