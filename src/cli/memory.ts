import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ResolvedConfig } from '../config/index.ts';
import {
  HISTORY_FORMATS,
  type HistoryFormat,
  type HistoryMessage,
  type ImportSummary,
  importHistory,
  parseHistory,
} from '../memory/index.ts';
import { createRuntime } from '../runtime.ts';
import { ensureUser, userIdProblem } from '../users/index.ts';
import { CliExit, EXIT_ERROR, EXIT_OK, EXIT_USAGE } from './common.ts';
import { remoteServer } from './remote.ts';

export type MemoryImportOptions = { user: string; format?: string; timezone?: string; json?: boolean };

/** Messages per request to a running server (its API takes bodies up to 1 MB). */
const BATCH_MESSAGES = 500;
const BATCH_BYTES = 700_000;

/**
 * `steward memory import FILE`: reads an exported chat history (JSONL, ChatGPT, WhatsApp,
 * Telegram) and stores it as the user's past conversations, through the running server when
 * one owns the data dir. Idempotent; prints progress on stderr and a summary on stdout.
 */
export async function memoryImportCommand(
  config: ResolvedConfig,
  file: string,
  options: MemoryImportOptions,
): Promise<void> {
  const problem = userIdProblem(options.user);
  if (problem) throw new CliExit(EXIT_USAGE, `steward memory import: ${problem}`);
  if (options.format !== undefined && !(HISTORY_FORMATS as readonly string[]).includes(options.format)) {
    throw new CliExit(
      EXIT_USAGE,
      `steward memory import: --format must be one of ${HISTORY_FORMATS.join(', ')} (default: told by the file)`,
    );
  }
  let content: string;
  try {
    content = readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliExit(EXIT_USAGE, `steward memory import: cannot read ${file}: ${(error as Error).message}`);
  }
  const timeZone = options.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  const parsed = parseHistory(content, {
    fileName: path.basename(file),
    format: options.format as HistoryFormat | undefined,
    timeZone,
  });
  if (!parsed.ok) throw new CliExit(EXIT_ERROR, `steward memory import: ${parsed.error}`);
  const { format, messages, skipped } = parsed.history;

  const total: ImportSummary = { added: 0, duplicates: 0, conversations: 0 };
  const conversations = new Set(messages.map((message) => message.conversation));
  const progress = (done: number) =>
    process.stderr.write(
      `steward memory import: ${done.toLocaleString('en-US')} of ${messages.length.toLocaleString('en-US')} messages\n`,
    );
  const remote = remoteServer(config);
  if (remote) {
    let done = 0;
    for (const batch of batches(messages)) {
      const response = await fetch(`${remote.url}/api/memory/import`, {
        method: 'POST',
        headers: remote.headers,
        body: JSON.stringify({ format, user: options.user, messages: batch }),
      });
      const body = (await response.json().catch(() => ({}))) as Partial<ImportSummary> & { message?: string };
      if (!response.ok) {
        throw new CliExit(
          EXIT_ERROR,
          `steward memory import: the server at ${remote.url} answered ${response.status}: ${body.message ?? ''}` +
            (done > 0 ? ` (${done} messages were imported before; run it again to import the rest)` : ''),
        );
      }
      total.added += body.added ?? 0;
      total.duplicates += body.duplicates ?? 0;
      done += batch.length;
      progress(done);
    }
  } else {
    const runtime = await createRuntime(config, { mcpServers: [] });
    try {
      await ensureUser(runtime.database, options.user);
      let done = 0;
      for (const batch of batches(messages)) {
        const summary = await importHistory(runtime.database, options.user, format, batch);
        total.added += summary.added;
        total.duplicates += summary.duplicates;
        done += batch.length;
        progress(done);
      }
    } finally {
      await runtime.close();
    }
  }
  total.conversations = conversations.size;
  const left = Object.entries(skipped).map(([reason, count]) => `${count} ${reason}`);
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ format, ...total, skipped }, null, 2)}\n`);
  } else {
    process.stdout.write(
      `Imported ${format} history for ${options.user}: ${total.added} new messages in ${total.conversations} ` +
        `conversations (${total.duplicates} already there).${left.length > 0 ? ` Left out: ${left.join(', ')}.` : ''}\n`,
    );
  }
  throw new CliExit(EXIT_OK);
}

/** The messages in requests of at most BATCH_MESSAGES messages and about BATCH_BYTES. */
function* batches(messages: readonly HistoryMessage[]): Generator<HistoryMessage[]> {
  let batch: HistoryMessage[] = [];
  let bytes = 0;
  for (const message of messages) {
    const size = JSON.stringify(message).length + 1;
    if (batch.length > 0 && (batch.length >= BATCH_MESSAGES || bytes + size > BATCH_BYTES)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(message);
    bytes += size;
  }
  if (batch.length > 0) yield batch;
}
