import { type DeliveryReceipt, deliverySummary } from '../channels/index.ts';
import type { ResolvedConfig } from '../config/index.ts';
import { createRuntime } from '../runtime.ts';
import { userIdProblem } from '../users/index.ts';
import type { ScheduleView } from '../workflows/index.ts';
import { CliExit, EXIT_ERROR, EXIT_OK, EXIT_USAGE } from './common.ts';
import { remoteServer } from './remote.ts';

export type SchedulesOptions = { user?: string; json?: boolean };

type RunView = {
  name: string;
  skill: string;
  user: string;
  status: string;
  turn_id: string | null;
  cost_usd: number;
  error: string | null;
  delivery?: DeliveryReceipt | null;
};

/**
 * `steward schedules`: every schedule (name, cron, zone, next run in the workflow's zone, last
 * run, its status and where its output went), through the running server when one owns the data dir.
 */
export async function schedulesCommand(config: ResolvedConfig, options: SchedulesOptions): Promise<void> {
  checkUser(options.user);
  const remote = remoteServer(config);
  let schedules: ScheduleView[];
  if (remote) {
    const query = new URLSearchParams(options.user ? { user: options.user } : {});
    const response = await fetch(`${remote.url}/api/schedules?${query}`, { headers: remote.headers });
    const body = (await response.json().catch(() => ({}))) as {
      schedules?: ScheduleView[];
      message?: string;
    };
    if (!response.ok || !body.schedules) throw failure(remote.url, response.status, body.message);
    schedules = body.schedules;
  } else {
    const runtime = await createRuntime(config, { mcpServers: [] });
    try {
      schedules = await runtime.workflows.list(options.user);
    } finally {
      await runtime.close();
    }
  }
  process.stdout.write(options.json ? `${JSON.stringify(schedules, null, 2)}\n` : formatTable(schedules));
  throw new CliExit(EXIT_OK);
}

/** `steward schedules run NAME`: runs a workflow now and waits for it; exit 1 unless it ended ok. */
export async function schedulesRunCommand(
  config: ResolvedConfig,
  name: string,
  options: SchedulesOptions,
): Promise<void> {
  checkUser(options.user);
  const remote = remoteServer(config);
  let run: RunView;
  if (remote) {
    const response = await fetch(`${remote.url}/api/schedules/run`, {
      method: 'POST',
      headers: remote.headers,
      body: JSON.stringify({ name, ...(options.user ? { user: options.user } : {}) }),
    });
    const body = (await response.json().catch(() => ({}))) as { run?: RunView; message?: string };
    if (response.status === 404) throw new CliExit(EXIT_ERROR, `steward schedules run: ${body.message}`);
    if (!response.ok || !body.run) throw failure(remote.url, response.status, body.message);
    run = body.run;
  } else {
    const runtime = await createRuntime(config, { mcpServers: [] });
    try {
      const { runView } = await import('../workflows/index.ts');
      const result = await runtime.workflows.runNow(name, options.user);
      if ('problem' in result) throw new CliExit(EXIT_ERROR, `steward schedules run: ${result.problem}`);
      run = runView(result.run, await runtime.workflows.deliveryOf(result.run));
    } finally {
      await runtime.close();
    }
  }
  process.stdout.write(options.json ? `${JSON.stringify(run, null, 2)}\n` : formatRun(run));
  throw new CliExit(run.status === 'ok' ? EXIT_OK : EXIT_ERROR);
}

/** The status line, then where the output went and the output itself (a server older than receipts sends no text). */
function formatRun(run: RunView): string {
  const status = `${run.skill} (${run.user}): ${run.status}${run.error ? ` — ${run.error}` : ''}\n`;
  if (!run.delivery) return status;
  const output = run.delivery.text ? `:\n\n${run.delivery.text.trimEnd()}\n` : '\n';
  return `${status}Output ${deliverySummary(run.delivery)}${output}`;
}

function checkUser(user: string | undefined): void {
  const problem = user ? userIdProblem(user) : null;
  if (problem) throw new CliExit(EXIT_USAGE, `steward schedules: ${problem}`);
}

function failure(url: string, status: number, message: string | undefined): CliExit {
  return new CliExit(
    EXIT_ERROR,
    `steward schedules: the server at ${url} answered ${status}: ${message ?? ''}`,
  );
}

function formatTable(schedules: ScheduleView[]): string {
  if (schedules.length === 0)
    return 'No schedules. Add one with workflow.build --schedule, or a schedule: line in a skill file.\n';
  const header = ['name', 'user', 'schedule', 'timezone', 'next run', 'last run', 'status', 'delivery'];
  const rows = schedules.map((schedule) => [
    schedule.name,
    schedule.user,
    schedule.schedule,
    schedule.timezone,
    schedule.paused ? 'paused' : (schedule.next_run ?? '-'),
    schedule.last_run ?? '-',
    schedule.last_status ?? '-',
    // A server older than receipts sends no `delivery`.
    schedule.delivery ? deliverySummary(schedule.delivery) : '-',
  ]);
  const lines = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...lines.map((line) => line[column]!.length)));
  return `${lines
    .map((line) =>
      line
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}
