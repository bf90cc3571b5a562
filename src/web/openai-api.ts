import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import {
  type ConverseDeps,
  converse,
  type Exchange,
  receiptsJson,
  type TurnEvent,
  type TurnOutcome,
  turnOutcome,
} from '../agents/index.ts';
import type { ResolvedConfig } from '../config/index.ts';
import type { Database } from '../db/index.ts';
import { type RefusalCode, RefusedError } from '../errors.ts';
import type { LlmClient } from '../llm/index.ts';
import { createConversation, getConversation } from '../memory/index.ts';
import { OWNER_USER } from '../server/index.ts';
import { unstorableCharacter } from '../skills/index.ts';
import { ensureUser, userOfApiToken } from '../users/index.ts';
import { housekeepingKind, housekeepingResponse } from './openai-housekeeping.ts';

/*
 * An OpenAI-compatible face: `GET /v1/models` and `POST /v1/chat/completions`, so any OpenAI
 * client (Open WebUI, LibreChat, the `openai` package) can use Steward as the model `steward`.
 * Steward keeps its own history: only the last user message of the request is read, and the
 * conversation is the one named by the request's `user` field within the token's user.
 */

export const OPENAI_MODEL = 'steward';
/** Conversations created for OpenAI clients are on this channel. */
export const OPENAI_CHANNEL = 'openai';

type OpenAiErrorBody = {
  error: { message: string; type: string; param: string | null; code: string | null };
};

function openAiError(
  c: Context,
  status: 400 | 401 | 404 | 413 | 429 | 500 | 503,
  message: string,
  code: string | null,
  options: { type?: string; param?: string | null } = {},
): Response {
  const body: OpenAiErrorBody = {
    error: {
      message,
      type: options.type ?? 'invalid_request_error',
      param: options.param ?? null,
      code,
    },
  };
  return c.json(body, status);
}

function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** The caller of a /v1 request, from `Authorization: Bearer`, or null when refused. */
async function callerOf(
  c: Context,
  deps: { database: Database; config: () => ResolvedConfig },
): Promise<string | null> {
  const expected = deps.config().api_token;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
  if (!match) return expected ? null : OWNER_USER;
  const given = match[1]!;
  if (expected && sameSecret(given, expected)) return OWNER_USER;
  if (!expected && given.length > 0 && !given.startsWith('stw_')) {
    // A loopback server without an owner token: clients must send some key; any non-user key is the owner's.
    return OWNER_USER;
  }
  return userOfApiToken(deps.database, given);
}

type OpenAiEnv = { Variables: { stewardUser: string } };

type ContentPart = { type?: unknown; text?: unknown };
type WireMessage = { role?: unknown; content?: unknown };

/** The text of the last user message, or a problem to report. */
function lastUserText(messages: unknown): { text: string } | { problem: string; param: string } {
  if (!Array.isArray(messages) || messages.length === 0) {
    return { problem: "'messages' must be a non-empty array of {role, content}.", param: 'messages' };
  }
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index] as WireMessage;
    if (!message || typeof message !== 'object') {
      return {
        problem: `messages[${index}] must be an object {role, content}.`,
        param: `messages[${index}]`,
      };
    }
    if (message.role !== 'user') continue;
    const { content } = message;
    let text: string;
    if (typeof content === 'string') text = content;
    else if (Array.isArray(content)) {
      text = (content as ContentPart[])
        .filter((part) => part && part.type === 'text' && typeof part.text === 'string')
        .map((part) => part.text as string)
        .join('\n');
    } else {
      return {
        problem: `messages[${index}].content must be a string or an array of {type: "text", text} parts.`,
        param: `messages[${index}].content`,
      };
    }
    if (!text.trim()) {
      return {
        problem: `messages[${index}] (the last user message) has no text.`,
        param: `messages[${index}].content`,
      };
    }
    const bad = unstorableCharacter(text);
    if (bad) {
      return {
        problem: `The last user message contains ${bad.what} at character ${bad.index + 1}; remove it and send again.`,
        param: `messages[${index}].content`,
      };
    }
    return { text };
  }
  return {
    problem: "'messages' has no message with role 'user'; send the user's message last.",
    param: 'messages',
  };
}

/** The conversation for (user, the request's `user` field): a stable id, created on first use. */
export function openAiConversationId(userId: string, clientKey: string): string {
  return `oai_${createHash('sha256').update(`${userId}\u0000${clientKey}`).digest('hex').slice(0, 32)}`;
}

async function conversationFor(database: Database, userId: string, clientKey: string): Promise<string> {
  const id = openAiConversationId(userId, clientKey);
  if (await getConversation(database, userId, id)) return id;
  try {
    await createConversation(database, userId, OPENAI_CHANNEL, { id });
  } catch (error) {
    // Two first requests at once: the other one created it.
    if (!(await getConversation(database, userId, id))) throw error;
  }
  return id;
}

function usageOf(outcome: TurnOutcome) {
  const { promptTokens, completionTokens, cachedTokens } = outcome.usage;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: cachedTokens },
  };
}

/** A refused message in OpenAI's error vocabulary; its status is the refusal's own. */
const OPENAI_CODE: Record<RefusalCode, string> = {
  invalid_message: 'invalid_message',
  conversation_not_found: 'not_found',
  rate_limited: 'rate_limit_exceeded',
  shutting_down: 'unavailable',
};

function refusalError(c: Context, error: unknown): Response {
  if (!(error instanceof RefusedError)) throw error;
  if (error.retryAfterSeconds !== null) c.header('Retry-After', String(error.retryAfterSeconds));
  return openAiError(c, error.status, error.message, OPENAI_CODE[error.code], {
    ...(error.code === 'rate_limited' ? { type: 'requests' } : {}),
  });
}

export function openAiRoutes(
  deps: ConverseDeps & {
    /** Answers clients' housekeeping requests (titles, tags…) without a turn. */
    llm: LlmClient;
    database: Database;
    config: () => ResolvedConfig;
    now?: () => Date;
  },
): Hono<OpenAiEnv> {
  const app = new Hono<OpenAiEnv>();
  const now = deps.now ?? (() => new Date());
  const created = () => Math.floor(now().getTime() / 1000);

  app.use('/v1/*', async (c, next) => {
    const userId = await callerOf(c, deps);
    if (!userId) {
      return openAiError(
        c,
        401,
        'Incorrect API key provided. Use the STEWARD_API_TOKEN or a token from `steward tokens create` as the API key.',
        'invalid_api_key',
      );
    }
    c.set('stewardUser', userId);
    return next();
  });

  app.get('/v1/models', (c) =>
    c.json({
      object: 'list',
      data: [{ id: OPENAI_MODEL, object: 'model', created: 0, owned_by: 'steward' }],
    }),
  );
  app.get('/v1/models/:model', (c) =>
    c.req.param('model') === OPENAI_MODEL
      ? c.json({ id: OPENAI_MODEL, object: 'model', created: 0, owned_by: 'steward' })
      : modelNotFound(c, c.req.param('model')),
  );

  app.post('/v1/chat/completions', async (c) => {
    const userId = c.get('stewardUser');
    // Bodies over API_BODY_LIMIT are refused at the edge (413 in OpenAI's error shape).
    const raw = await c.req.text();
    let body: Record<string, unknown>;
    try {
      const parsed = JSON.parse(raw) as unknown;
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      body = parsed as Record<string, unknown>;
    } catch {
      return openAiError(
        c,
        400,
        'The body must be a JSON object {"model": "steward", "messages": [...]}.',
        'invalid_json',
      );
    }
    if (typeof body.model !== 'string' || !body.model) {
      return openAiError(c, 400, '\'model\' is required: use "steward".', 'missing_model', {
        param: 'model',
      });
    }
    if (body.model !== OPENAI_MODEL) return modelNotFound(c, body.model);
    const input = lastUserText(body.messages);
    if ('problem' in input)
      return openAiError(c, 400, input.problem, 'invalid_messages', { param: input.param });
    const clientKey = body.user === undefined || body.user === null ? '' : body.user;
    if (typeof clientKey !== 'string' || clientKey.length > 256 || unstorableCharacter(clientKey)) {
      return openAiError(c, 400, "'user' must be a string of at most 256 characters.", 'invalid_user', {
        param: 'user',
      });
    }
    const stream = body.stream === true;
    const options = body.stream_options as { include_usage?: unknown } | undefined | null;
    const includeUsage = stream && options?.include_usage === true;

    if (housekeepingKind(body.messages)) {
      // A client's own housekeeping (a title, tags): counted like a message, answered by the
      // model alone — no turn, no conversation, no skills, no memory.
      try {
        await deps.rateLimit?.check({ userId });
      } catch (error) {
        return refusalError(c, error);
      }
      const request = { userId, messages: body.messages as [], stream, includeUsage };
      return housekeepingResponse(c, { llm: deps.llm, model: OPENAI_MODEL, created: created() }, request);
    }

    let exchange: Exchange;
    try {
      // Counted before the conversation is looked up or created; the turn is then admitted.
      await deps.rateLimit?.check({ userId });
      await ensureUser(deps.database, userId);
      const conversationId = await conversationFor(deps.database, userId, clientKey);
      exchange = await converse(deps, {
        userId,
        surface: OPENAI_CHANNEL,
        text: input.text,
        options: {
          conversationId,
          admitted: true,
          // Receipts travel as data (`receipts` beside `choices`), never as lines in the content.
          receipts: 'data',
          ...(stream
            ? { signal: c.req.raw.signal, stream: (event: TurnEvent) => event.type === 'text_delta' }
            : {}),
        },
      });
    } catch (error) {
      return refusalError(c, error);
    }

    if (!stream) {
      let outcome: TurnOutcome;
      try {
        outcome = await turnOutcome(exchange);
      } catch (error) {
        return refusalError(c, error);
      }
      return c.json({
        id: `chatcmpl-${outcome.turnId}`,
        object: 'chat.completion',
        created: created(),
        model: OPENAI_MODEL,
        system_fingerprint: null,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: outcome.reply, refusal: null },
            logprobs: null,
            finish_reason: 'stop',
          },
        ],
        usage: usageOf(outcome),
        receipts: receiptsJson(outcome.receipts),
      });
    }

    return streamSSE(c, async (sse) => {
      const id = `chatcmpl-${randomId()}`;
      const stamp = created();
      const chunk = (
        delta: Record<string, unknown>,
        finish: string | null,
        extra: Record<string, unknown> = {},
      ) =>
        sse.writeSSE({
          data: JSON.stringify({
            id,
            object: 'chat.completion.chunk',
            created: stamp,
            model: OPENAI_MODEL,
            system_fingerprint: null,
            choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
            ...(includeUsage ? { usage: null } : {}),
            ...extra,
          }),
        });
      await chunk({ role: 'assistant', content: '', refusal: null }, null);
      let sent = '';
      for await (const event of exchange.events) {
        if (event.type !== 'text_delta' || !event.text) continue;
        sent += event.text;
        await chunk({ content: event.text }, null);
      }
      let outcome: TurnOutcome;
      try {
        outcome = await turnOutcome(exchange);
      } catch (error) {
        const refused = error instanceof RefusedError ? error : null;
        await sse.writeSSE({
          data: JSON.stringify({
            error: {
              message: refused ? refused.message : 'The turn failed; see the server log.',
              type: refused ? 'invalid_request_error' : 'server_error',
              param: null,
              code: refused ? OPENAI_CODE[refused.code] : 'internal_error',
            },
          }),
        });
        await sse.writeSSE({ data: '[DONE]' });
        return;
      }
      // What the deltas did not carry (a reply written without streaming, or after a tool call).
      const rest = outcome.reply.startsWith(sent)
        ? outcome.reply.slice(sent.length)
        : sent
          ? `\n\n${outcome.reply}`
          : outcome.reply;
      if (rest) await chunk({ content: rest }, null);
      await chunk({}, 'stop', { receipts: receiptsJson(outcome.receipts) });
      if (includeUsage) {
        await sse.writeSSE({
          data: JSON.stringify({
            id,
            object: 'chat.completion.chunk',
            created: stamp,
            model: OPENAI_MODEL,
            system_fingerprint: null,
            choices: [],
            usage: usageOf(outcome),
          }),
        });
      }
      await sse.writeSSE({ data: '[DONE]' });
    });
  });
  return app;
}

function modelNotFound(c: Context, model: string): Response {
  return openAiError(
    c,
    404,
    `The model \`${model.slice(0, 100)}\` does not exist or you do not have access to it. Use "${OPENAI_MODEL}".`,
    'model_not_found',
    { param: 'model' },
  );
}

function randomId(): string {
  return randomBytes(12).toString('hex');
}
