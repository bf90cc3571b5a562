import { createInterface } from 'node:readline/promises';
import type { ChannelMode, ResolvedConfig } from '../config/index.ts';
import type { Usage } from '../llm/index.ts';
import { createRuntime, type Runtime } from '../runtime.ts';
import { userIdProblem } from '../users/index.ts';
import { CliExit, EXIT_ERROR, EXIT_OK, EXIT_USAGE } from './common.ts';
import { remoteServer } from './remote.ts';

type ChatReply = { reply: string; conversationId: string; turnId: string; status: string; usage: Usage };

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
 */
export async function chatCommand(config: ResolvedConfig, options: ChatOptions): Promise<void> {
  const problem = userIdProblem(options.user);
  if (problem) throw new CliExit(EXIT_USAGE, `steward chat: ${problem}`);
  const session = await openSession(config);
  try {
    if (options.once !== undefined) {
      if (!options.once.trim()) throw new CliExit(EXIT_USAGE, 'steward chat --once needs a message');
      const reply = await session.send({
        text: options.once,
        user: options.user,
        conversation: options.conversation,
        new: options.new,
        mode: options.mode,
      });
      process.stdout.write(
        options.json
          ? `${JSON.stringify({ reply: reply.reply, conversationId: reply.conversationId, turnId: reply.turnId, usage: reply.usage }, null, 2)}\n`
          : `${reply.reply}\n`,
      );
      if (reply.status === 'failed') throw new CliExit(EXIT_ERROR);
      return;
    }
    await interactive(session, options);
  } finally {
    await session.close();
  }
  throw new CliExit(EXIT_OK);
}

type Session = {
  send(message: {
    text: string;
    user: string;
    conversation?: string;
    new?: boolean;
    mode?: ChannelMode;
  }): Promise<ChatReply>;
  close(): Promise<void>;
};

async function openSession(config: ResolvedConfig): Promise<Session> {
  const remote = remoteServer(config);
  if (remote) {
    return {
      send: async (message) => {
        const response = await fetch(`${remote.url}/api/chat`, {
          method: 'POST',
          headers: remote.headers,
          body: JSON.stringify({
            text: message.text,
            user: message.user,
            conversation: message.conversation,
            new: message.new,
            channel: 'cli',
          }),
        });
        const body = (await response.json()) as ChatReply & { message?: string };
        if (!response.ok)
          throw new CliExit(
            EXIT_ERROR,
            `steward chat: the server answered ${response.status}: ${body.message ?? ''}`,
          );
        return body;
      },
      close: async () => {},
    };
  }
  const runtime: Runtime = await createRuntime(config);
  await runtime.engine.recoverInterrupted();
  return {
    send: async (message) =>
      runtime.engine.handle({
        userId: message.user,
        text: message.text,
        channel: 'cli',
        conversationId: message.conversation,
        newConversation: message.new,
        mode: message.mode,
      }),
    // Closing drains the turn's background jobs (compaction) before the process exits.
    close: () => runtime.close(),
  };
}

async function interactive(session: Session, options: ChatOptions): Promise<void> {
  const terminal = createInterface({
    input: process.stdin,
    output: process.stdout,
    terminal: process.stdin.isTTY,
  });
  process.stdout.write('Steward — type a message; /new starts a new conversation, /quit leaves.\n');
  let conversation = options.conversation;
  let fresh = options.new ?? false;
  // The async iterator buffers lines, so input piped in faster than replies come is not lost.
  const prompt = () => process.stdout.write('> ');
  try {
    prompt();
    for await (const raw of terminal) {
      const line = raw.trim();
      if (line === '/quit' || line === '/exit') break;
      if (line === '/new') {
        conversation = undefined;
        fresh = true;
        process.stdout.write('(new conversation)\n');
      } else if (line) {
        const reply = await session.send({
          text: line,
          user: options.user,
          conversation,
          new: fresh,
          mode: options.mode,
        });
        conversation = reply.conversationId;
        fresh = false;
        process.stdout.write(`${reply.reply}\n`);
      }
      prompt();
    }
  } finally {
    terminal.close();
  }
}
