import type { Update } from 'grammy/types';
import { type FakeHttp, type FakeReply, type RecordedRequest, startFakeHttp } from './fake-http.ts';

/*
 * A fake Telegram Bot API (`{apiRoot}/bot<token>/<method>`): getMe, setWebhook, deleteWebhook,
 * getUpdates (long polling over queued updates), sendMessage (checks Telegram's HTML rules
 * and length), sendChatAction, getFile with file downloads at `{apiRoot}/file/bot<token>/<path>`,
 * and sendVoice (a multipart upload, checked to be Ogg). Failures can be scripted per method.
 */

export const FAKE_BOT = { id: 7000001, username: 'steward_test_bot' };
export const FAKE_BOT_TOKEN = `${FAKE_BOT.id}:AAH-fake-token-for-tests`;

export type SentMessage = {
  chat_id: string;
  text: string;
  parse_mode?: string;
  reply_parameters?: { message_id: number };
  message_thread_id?: number;
  message_id: number;
};

export type SentVoice = { chat_id: string; audio: Buffer; message_id: number; content_type: string };

export type FakeTelegram = FakeHttp & {
  readonly sent: SentMessage[];
  readonly voices: SentVoice[];
  /** Files downloaded from `/file/bot<token>/…`, by file_id. */
  readonly downloads: string[];
  /** Makes a file available to getFile (a voice note the user sent); returns its file_id. */
  addFile(bytes: Uint8Array, extension?: string): string;
  readonly chatActions: Array<{ chat_id: string; action: string }>;
  readonly webhooks: Array<{ url: string; secret_token?: string }>;
  /** Offsets getUpdates was called with. */
  readonly polls: Array<number | undefined>;
  /** Scripted replies for the next calls of `method`, in order. */
  failNext(method: string, ...replies: FakeReply[]): void;
  queueUpdate(update: Update): void;
  /** Calls of a method (all requests, including failed ones). */
  calls(method: string): RecordedRequest[];
  /** Resolves with the next message sent (benchmarks time replies with it). */
  nextSent(): Promise<SentMessage>;
};

const ALLOWED_TAGS = new Set([
  'b',
  'strong',
  'i',
  'em',
  'u',
  'ins',
  's',
  'strike',
  'del',
  'code',
  'pre',
  'a',
  'blockquote',
  'tg-spoiler',
  'span',
]);

/** The checks Telegram makes on HTML parse mode: known tags, properly nested, entities escaped. */
export function telegramHtmlProblem(html: string): string | null {
  const stack: string[] = [];
  const tokens = html.split(/(<[^>]*>)/);
  for (const token of tokens) {
    if (token.startsWith('<')) {
      const match = /^<(\/?)([a-z-]+)(\s[^>]*)?>$/.exec(token);
      if (!match || !ALLOWED_TAGS.has(match[2]!)) return `Unsupported start tag "${token}"`;
      if (match[1]) {
        if (stack.pop() !== match[2]) return `Can't find end tag corresponding to start tag "${match[2]}"`;
      } else stack.push(match[2]!);
    } else if (/[<>]/.test(token) || /&(?!(amp|lt|gt|quot|#\d+);)/.test(token)) {
      return 'Unexpected end of name token';
    }
  }
  return stack.length ? `Can't find end tag corresponding to start tag "${stack.at(-1)}"` : null;
}

export async function startFakeTelegram(options: { token?: string } = {}): Promise<FakeTelegram> {
  const token = options.token ?? FAKE_BOT_TOKEN;
  const sent: SentMessage[] = [];
  const chatActions: FakeTelegram['chatActions'] = [];
  const webhooks: FakeTelegram['webhooks'] = [];
  const polls: Array<number | undefined> = [];
  const scripted = new Map<string, FakeReply[]>();
  const updates: Update[] = [];
  const waiting = new Set<() => void>();
  const sentListeners: Array<(message: SentMessage) => void> = [];
  const voices: SentVoice[] = [];
  const downloads: string[] = [];
  const files = new Map<string, { path: string; bytes: Uint8Array }>();
  let nextFile = 1;
  /** The URL Telegram would send updates to (setWebhook sets it, deleteWebhook clears it). */
  let registered = '';
  let nextMessageId = 500;
  const ok = (result: unknown): FakeReply => ({ status: 200, json: { ok: true, result } });
  const error = (status: number, description: string, parameters?: object): FakeReply => ({
    status,
    json: { ok: false, error_code: status, description, ...(parameters ? { parameters } : {}) },
  });

  const http = await startFakeHttp(async (request) => {
    const download = /^\/file\/bot([^/]+)\/(.+)$/.exec(request.path);
    if (download) {
      if (download[1] !== token) return error(401, 'Unauthorized');
      const found = [...files.entries()].find(([, file]) => file.path === download[2]);
      if (!found) return error(404, 'Not Found');
      downloads.push(found[0]);
      return { status: 200, bytes: found[1].bytes, headers: { 'content-type': 'application/octet-stream' } };
    }
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(request.path);
    if (!match) return error(404, 'Not Found');
    if (match[1] !== token) return error(401, 'Unauthorized');
    const method = match[2]!;
    const body = request.body ?? {};
    const script = scripted.get(method);
    if (script?.length) return script.shift()!;
    switch (method) {
      case 'getMe':
        return ok({ id: FAKE_BOT.id, is_bot: true, first_name: 'Steward', username: FAKE_BOT.username });
      case 'setWebhook':
        webhooks.push({ url: String(body.url), secret_token: body.secret_token as string | undefined });
        registered = String(body.url);
        return ok(true);
      case 'deleteWebhook':
        registered = '';
        return ok(true);
      case 'getWebhookInfo':
        return ok({ url: registered, has_custom_certificate: false, pending_update_count: 0 });
      case 'getFile': {
        const fileId = String(body.file_id ?? '');
        const file = files.get(fileId);
        if (!file) return error(400, 'Bad Request: invalid file_id');
        return ok({
          file_id: fileId,
          file_unique_id: `u${fileId}`,
          file_size: file.bytes.length,
          file_path: file.path,
        });
      }
      case 'sendVoice': {
        const form = await new Response(request.bytes, {
          headers: { 'content-type': request.headers['content-type'] ?? '' },
        })
          .formData()
          .catch(() => null);
        // Uploads go as `voice=attach://<part>` with the file in that part (grammy), or inline.
        const field = form?.get('voice');
        const voice =
          typeof field === 'string' && field.startsWith('attach://')
            ? form?.get(field.slice('attach://'.length))
            : field;
        if (!form || !(voice instanceof File))
          return error(400, 'Bad Request: there is no voice in the request');
        const audio = Buffer.from(await voice.arrayBuffer());
        if (audio.subarray(0, 4).toString('latin1') !== 'OggS') {
          return error(400, 'Bad Request: wrong file type: voice messages must be OGG/OPUS');
        }
        const sentVoice: SentVoice = {
          chat_id: String(form.get('chat_id')),
          audio,
          message_id: nextMessageId++,
          content_type: voice.type,
        };
        voices.push(sentVoice);
        return ok({
          message_id: sentVoice.message_id,
          date: Math.floor(Date.now() / 1000),
          chat: { id: Number(sentVoice.chat_id), type: 'private' },
          voice: { file_id: `sent-${sentVoice.message_id}`, duration: 1 },
        });
      }
      case 'sendChatAction':
        chatActions.push({ chat_id: String(body.chat_id), action: String(body.action) });
        return ok(true);
      case 'getUpdates': {
        const offset = body.offset as number | undefined;
        polls.push(offset);
        const timeoutMs = Number(body.timeout ?? 0) * 1000;
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const ready = updates.filter((update) => offset === undefined || update.update_id >= offset);
          if (ready.length || Date.now() >= deadline) return ok(ready);
          await new Promise<void>((resolve) => {
            const wake = () => {
              waiting.delete(wake);
              resolve();
            };
            waiting.add(wake);
            setTimeout(wake, Math.min(200, Math.max(0, deadline - Date.now())));
          });
        }
      }
      case 'sendMessage': {
        const text = String(body.text ?? '');
        if (!text.trim()) return error(400, 'Bad Request: message text is empty');
        if (text.length > 4096) return error(400, 'Bad Request: message is too long');
        if (body.parse_mode === 'HTML') {
          const problem = telegramHtmlProblem(text);
          if (problem) return error(400, `Bad Request: can't parse entities: ${problem}`);
        }
        const message: SentMessage = {
          chat_id: String(body.chat_id),
          text,
          ...(body.parse_mode ? { parse_mode: String(body.parse_mode) } : {}),
          ...(body.reply_parameters
            ? { reply_parameters: body.reply_parameters as { message_id: number } }
            : {}),
          ...(body.message_thread_id ? { message_thread_id: Number(body.message_thread_id) } : {}),
          message_id: nextMessageId++,
        };
        sent.push(message);
        for (const listener of sentListeners.splice(0)) listener(message);
        return ok({
          message_id: message.message_id,
          date: Math.floor(Date.now() / 1000),
          chat: { id: Number(body.chat_id), type: 'private' },
          text,
        });
      }
      default:
        return error(404, `Not Found: method ${method}`);
    }
  });
  return {
    ...http,
    sent,
    voices,
    downloads,
    addFile: (bytes, extension = 'oga') => {
      const id = `AwACAgIAAxkBAAI${nextFile}voice`;
      files.set(id, { path: `voice/file_${nextFile++}.${extension}`, bytes });
      return id;
    },
    chatActions,
    webhooks,
    polls,
    failNext: (method, ...replies) => scripted.set(method, [...(scripted.get(method) ?? []), ...replies]),
    queueUpdate: (update) => {
      updates.push(update);
      for (const wake of [...waiting]) wake();
    },
    calls: (method) => http.requests.filter((request) => request.path.endsWith(`/${method}`)),
    nextSent: () => new Promise((resolve) => sentListeners.push(resolve)),
  };
}
