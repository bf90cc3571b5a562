import { Hono } from 'hono';
import { html } from 'hono/html';
import { streamSSE } from 'hono/streaming';
import { type Conversed, converse, type Message } from '../../agents/index.ts';
import { StewardError } from '../../errors.ts';
import { createConversation, latestConversation, recentMessages } from '../../memory/index.ts';
import { unstorableCharacter } from '../../skills/index.ts';
import { ensureUser } from '../../users/index.ts';
import { csrfField, page, type WebEnv } from '../layout.ts';
import { markdown, markdownToHtml } from '../markdown.ts';
import { formOf, type PageDeps } from './page-deps.ts';

export const WEB_CHANNEL = 'web';
const MAX_TEXT = 32_000;

function textProblem(text: string): string | null {
  if (!text.trim()) return 'Type a message first.';
  if (text.length > MAX_TEXT) return `The message is over ${MAX_TEXT} characters; send a shorter one.`;
  const bad = unstorableCharacter(text);
  return bad
    ? `The message contains ${bad.what} at character ${bad.index + 1}; remove it and send again.`
    : null;
}

/** The chat page, its form without script, and the stream its script reads the reply from. */
export function chatRoutes(deps: PageDeps): Hono<WebEnv> {
  const app = new Hono<WebEnv>();
  const { database } = deps;

  app.get('/chat', async (c) => {
    const session = c.get('session');
    await ensureUser(database, session.userId);
    const conversation = await latestConversation(database, session.userId, WEB_CHANNEL);
    const messages = (await recentMessages(database, conversation.id, { limit: 100 })).filter(
      (message) =>
        (message.role === 'user' || message.role === 'assistant') &&
        message.content &&
        !message.toolCalls?.length,
    );
    const error = c.req.query('error');
    return page(c, {
      title: 'Chat',
      session,
      scripts: ['chat.js'],
      body: html`<ol class="messages" id="messages" aria-live="polite">
          ${messages.map((message) =>
            message.role === 'user'
              ? html`<li class="message user" data-role="user">${message.content}</li>`
              : html`<li class="message reply markdown" data-role="reply">${markdown(message.content)}${message.turnId ? html`<a class="trace" href="/turns/${message.turnId}">trace</a>` : ''}</li>`,
          )}
        </ol>
        ${messages.length ? '' : html`<p class="empty" id="chat-empty">No messages yet. Say hello — Steward answers here, and each reply links to its trace.</p>`}
        ${error ? html`<p class="error" role="alert">${error.slice(0, 300)}</p>` : ''}
        <form method="post" action="/chat" id="chat-form" class="chat-form" data-conversation="${conversation.id}">
          ${csrfField(session)}
          <label for="text" class="visually-hidden">Message</label>
          <textarea id="text" name="text" rows="3" required maxlength="${MAX_TEXT}" placeholder="Message Steward (Enter sends, Shift+Enter for a new line; /new starts over)"></textarea>
          <div class="actions"><button type="submit">Send</button></div>
        </form>
        <form method="post" action="/chat/new" class="inline">${csrfField(session)}<button type="submit" class="secondary">New conversation</button></form>`,
    });
  });

  /** The form without script: runs the turn, then shows the page again. */
  app.post('/chat', async (c) => {
    const session = c.get('session');
    const text = (await formOf(c)).text ?? '';
    const problem = textProblem(text);
    if (problem) return c.redirect(`/chat?error=${encodeURIComponent(problem)}`, 303);
    try {
      const exchange = await converse(deps, webMessage(session.userId, text));
      await exchange.result;
    } catch (error) {
      if (error instanceof StewardError)
        return c.redirect(`/chat?error=${encodeURIComponent(error.message)}`, 303);
      throw error;
    }
    return c.redirect('/chat', 303);
  });

  app.post('/chat/new', async (c) => {
    await createConversation(database, c.get('session').userId, WEB_CHANNEL);
    return c.redirect('/chat', 303);
  });

  /** The page's script posts here: the reply streams as server-sent events. */
  app.post('/chat/stream', async (c) => {
    const session = c.get('session');
    const text = (await formOf(c)).text ?? '';
    const problem = textProblem(text);
    return streamSSE(c, async (stream) => {
      const fail = (message: string) =>
        stream.writeSSE({ event: 'error', data: JSON.stringify({ message }) });
      if (problem) return fail(problem);
      let conversed: Conversed;
      try {
        const message = webMessage(session.userId, text);
        const exchange = await converse(deps, {
          ...message,
          options: {
            ...message.options,
            signal: c.req.raw.signal,
            stream: (event) => event.type === 'turn_start' || event.type === 'text_delta',
          },
        });
        for await (const event of exchange.events) {
          if (event.type === 'turn_start') {
            await stream.writeSSE({ event: 'turn', data: JSON.stringify({ turnId: event.turnId }) });
          } else if (event.type === 'text_delta') {
            await stream.writeSSE({ event: 'delta', data: JSON.stringify({ text: event.text }) });
          }
        }
        conversed = await exchange.result;
      } catch (error) {
        return fail(error instanceof StewardError ? error.message : 'The turn failed; see the server log.');
      }
      await stream.writeSSE({
        event: 'done',
        data: JSON.stringify(
          conversed.kind === 'turn'
            ? {
                html: markdownToHtml(conversed.outcome.reply),
                turnId: conversed.outcome.turnId,
                status: conversed.outcome.status,
              }
            : { html: markdownToHtml('Started a new conversation.'), turnId: null },
        ),
      });
    });
  });

  return app;
}

/** A message typed on the dashboard: it goes to the user's latest web conversation; `/new` starts another. */
function webMessage(userId: string, text: string): Message {
  return { userId, surface: WEB_CHANNEL, text, options: { commands: true } };
}
