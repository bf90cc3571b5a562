import { createInterface } from 'node:readline/promises';
import { converse, type ReceiptJson, receiptsJson, type TurnEvent, turnOutcome } from '../agents/index.ts';
import type { ChannelMode, ResolvedConfig } from '../config/index.ts';
import type { Usage } from '../llm/index.ts';
import { createRuntime, type Runtime } from '../runtime.ts';
import { userIdProblem } from '../users/index.ts';
import { chatLog } from './chat-log.ts';
import { afterStream } from './chat-output.ts';
import { ChatProgress } from './chat-progress.ts';
import { CliExit, EXIT_ERROR, EXIT_OK, EXIT_USAGE } from './common.ts';
import { remoteServer } from './remote.ts';

type ChatReply = {
  reply: string;
  conversationId: string;
  turnId: string;
  status: string;
  usage: Usage;
  receipts: ReceiptJson[];
};

export type ChatOptions = {
  once?: string;
  user: string;
  json?: boolean;
  conversation?: string;
  new?: boolean;
  mode?: ChannelMode;
};

/**
 * `steward chat`: talk to Steward from the terminal, through the server's API when a server
 * owns the data dir, else on this process's own runtime. `--once` answers one message.
 * While a turn runs, its progress shows on stderr (one updating line on a terminal); the
 * first Ctrl-C cancels the turn and says what was already done, a second one exits.
 */
export async function chatCommand(config: ResolvedConfig, options: ChatOptions): Promise<void> {
  const problem = userIdProblem(options.user);
  if (problem) throw new CliExit(EXIT_USAGE, `steward chat: ${problem}`);
  const session = await openSession(config);
  try {
    if (options.once !== undefined) {
      if (!options.once.trim()) throw new CliExit(EXIT_USAGE, 'steward chat --once needs a message');
      process.on(
        'SIGINT',
        onInterrupt(() => {
          process.stderr.write('Stopped.\n');
          process.exit(130);
        }),
      );
      const reply = await runTurn(session, {
        text: options.once,
        user: options.user,
        conversation: options.conversation,
        new: options.new,
        mode: options.mode,
        // --json: the receipts as data, not as lines in the reply.
        ...(options.json ? { receipts: 'data' as const } : {}),
      });
      process.stdout.write(
        options.json
          ? `${JSON.stringify({ reply: reply.reply, conversationId: reply.conversationId, turnId: reply.turnId, usage: reply.usage, receipts: reply.receipts }, null, 2)}\n`
          : `${reply.reply}\n`,
      );
      showLogNotice(session);
      if (reply.status === 'failed') throw new CliExit(EXIT_ERROR);
      return;
    }
    await interactive(session, options);
  } finally {
    await session.close();
  }
  throw new CliExit(EXIT_OK);
}

type Message = {
  text: string;
  user: string;
  conversation?: string;
  new?: boolean;
  mode?: ChannelMode;
  receipts?: 'lines' | 'data';
};

type Session = {
  /** Where the turns run: the server's URL, or this process on the data dir. */
  where: string;
  send(message: Message, live: { emit: (event: TurnEvent) => void; signal: AbortSignal }): Promise<ChatReply>;
  /** In this process: one line when warnings or errors went to the log since the last call. */
  logNotice?: () => string | null;
  close(): Promise<void>;
};

async function openSession(config: ResolvedConfig): Promise<Session> {
  const remote = remoteServer(config);
  if (remote) {
    return {
      where: `the server at ${remote.url}`,
      send: async (message, live) => {
        const response = await fetch(`${remote.url}/api/chat`, {
          method: 'POST',
          headers: { ...remote.headers, accept: 'text/event-stream' },
          body: JSON.stringify({
            text: message.text,
            user: message.user,
            conversation: message.conversation,
            new: message.new,
            mode: message.mode,
            channel: 'cli',
            receipts: message.receipts,
          }),
          // Closing the stream cancels the turn on the server.
          signal: live.signal,
        });
        if (!response.ok || !response.body) {
          const body = (await response.json().catch(() => ({}))) as { message?: string };
          throw new CliExit(
            EXIT_ERROR,
            `steward chat: the server answered ${response.status}: ${body.message ?? ''}`,
          );
        }
        return readEventStream(response.body, live.emit);
      },
      close: async () => {},
    };
  }
  const log = chatLog(config);
  const runtime: Runtime = await createRuntime(config, { logger: log.logger });
  await runtime.engine.recoverInterrupted();
  return {
    where: `this process, on ${config.database_url ? 'DATABASE_URL' : config.dataDir}`,
    logNotice: log.notice,
    send: async (message, live) => {
      const outcome = await turnOutcome(
        await converse(runtime, {
          userId: message.user,
          surface: 'cli',
          text: message.text,
          options: {
            conversationId: message.conversation,
            newConversation: message.new,
            mode: message.mode,
            receipts: message.receipts,
            observe: live.emit,
            signal: live.signal,
          },
        }),
      );
      return { ...outcome, receipts: receiptsJson(outcome.receipts) };
    },
    // Closing drains the turn's background jobs (compaction) before the process exits.
    close: () => runtime.close(),
  };
}

/** Reads `POST /api/chat`'s server-sent events: each turn event, then `done` (or `error`). */
async function readEventStream(
  body: ReadableStream<Uint8Array>,
  emit: (event: TurnEvent) => void,
): Promise<ChatReply> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf('\n\n');
      const name = /^event: ?(.*)$/m.exec(block)?.[1];
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n');
      if (!data) continue;
      const parsed = JSON.parse(data) as TurnEvent & ChatReply & { message?: string };
      if (name === 'done') return parsed;
      if (name === 'error')
        throw new CliExit(EXIT_ERROR, `steward chat: ${parsed.message ?? 'the turn failed'}`);
      emit(parsed);
    }
  }
  throw new CliExit(EXIT_ERROR, 'steward chat: the server closed the stream before the turn ended');
}

/**
 * Runs one turn with its progress on stderr and Ctrl-C wired to cancel it. `onText` receives
 * the reply as it streams (interactive mode prints it as it comes).
 */
async function runTurn(
  session: Session,
  message: Message,
  stream?: { onEvent(event: TurnEvent, progress: ChatProgress): void },
): Promise<ChatReply> {
  const progress = new ChatProgress(process.stderr);
  const controller = new AbortController();
  let presses = 0;
  const interrupt = () => {
    presses++;
    if (presses > 1) {
      progress.stop();
      process.stderr.write('Stopped.\n');
      process.exit(130);
    }
    progress.note('cancelling (Ctrl-C again quits)');
    controller.abort(new Error('cancelled by the user'));
  };
  cancelTurn = interrupt;
  try {
    return await session.send(message, {
      signal: controller.signal,
      emit: (event) => {
        stream?.onEvent(event, progress);
        progress.event(event);
      },
    });
  } catch (error) {
    if (!controller.signal.aborted) throw error;
    // The server's stream closed with the cancel: say what this side saw done.
    const done = progress.done.length
      ? `Done before it stopped:\n${progress.done.map((command) => `- ${command}`).join('\n')}`
      : 'Nothing was done yet.';
    return {
      reply: `You cancelled. ${done}`,
      conversationId: message.conversation ?? '',
      turnId: '',
      status: 'interrupted',
      usage: { promptTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, completionTokens: 0, cost: 0 },
      receipts: [],
    };
  } finally {
    cancelTurn = null;
    progress.stop();
  }
}

/** After a reply: the one line saying warnings or errors went to the log meanwhile. */
function showLogNotice(session: Session): void {
  const notice = session.logNotice?.();
  if (notice) process.stderr.write(`${notice}\n`);
}

/** Ctrl-C: cancels the running turn when there is one (see runTurn), else leaves. */
let cancelTurn: (() => void) | null = null;
function onInterrupt(leave: () => void): () => void {
  return () => (cancelTurn ? cancelTurn() : leave());
}

const HELP = [
  'Type a message and press Enter. Commands (not sent to Steward):',
  '  /help     this list',
  '  /new      start a new conversation',
  '  /status   user, conversation, mode and where turns run',
  '  /quit     leave (also /exit, Ctrl-D)',
  'Ctrl-C cancels a running turn (Steward says what was already done); a second Ctrl-C quits.',
  'To send a message that starts with "/", begin it with "//".',
].join('\n');

async function interactive(session: Session, options: ChatOptions): Promise<void> {
  const terminal = createInterface({
    input: process.stdin,
    output: process.stdout,
    terminal: process.stdin.isTTY,
  });
  process.stdout.write('Steward — type a message; /help lists commands, /quit leaves.\n');
  let conversation = options.conversation;
  let fresh = options.new ?? false;
  let quitting = false;
  const leave = () => {
    quitting = true;
    process.stdout.write('\n');
    terminal.close();
  };
  const interrupt = onInterrupt(leave);
  terminal.on('SIGINT', interrupt);
  process.on('SIGINT', interrupt);
  // The async iterator buffers lines, so input piped in faster than replies come is not lost.
  const prompt = () => process.stdout.write('> ');
  try {
    prompt();
    for await (const raw of terminal) {
      const line = raw.trim();
      const command = /^\/([A-Za-z]\w*)(?:\s|$)/.exec(line)?.[1]?.toLowerCase();
      if (command === 'quit' || command === 'exit') break;
      if (command === 'help') process.stdout.write(`${HELP}\n`);
      else if (command === 'new') {
        conversation = undefined;
        fresh = true;
        process.stdout.write('(new conversation)\n');
      } else if (command === 'status') {
        process.stdout.write(
          `user ${options.user} · conversation ${fresh ? '(new)' : (conversation ?? '(your latest on the terminal)')} · mode ${options.mode ?? "the conversation's"} · turns run in ${session.where}\n`,
        );
      } else if (command !== undefined) {
        process.stdout.write(`Unknown command /${command}. /help lists the commands.\n`);
      } else if (line) {
        const reply = await talk(session, {
          text: line.startsWith('//') ? line.slice(1) : line,
          user: options.user,
          conversation,
          new: fresh,
          mode: options.mode,
        });
        if (reply.conversationId) conversation = reply.conversationId;
        fresh = false;
      }
      if (quitting) break;
      prompt();
    }
  } finally {
    process.off('SIGINT', interrupt);
    terminal.close();
  }
}

/** One turn in interactive mode: the reply text printed as it streams, then anything it missed. */
async function talk(session: Session, message: Message): Promise<ChatReply> {
  let segment = '';
  const reply = await runTurn(session, message, {
    onEvent(event, progress) {
      if (event.type === 'text_delta') {
        progress.quiet(true);
        process.stdout.write(event.text);
        segment += event.text;
      } else if (
        segment &&
        event.type !== 'llm_call' &&
        event.type !== 'turn_end' &&
        event.type !== 'limit'
      ) {
        // Text the model wrote before calling tools: it stays, on its own line.
        process.stdout.write('\n');
        segment = '';
        progress.quiet(false);
      }
    },
  });
  process.stdout.write(afterStream(segment, reply.reply));
  showLogNotice(session);
  return reply;
}
