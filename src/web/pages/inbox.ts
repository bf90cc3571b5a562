import { Hono } from 'hono';
import { html } from 'hono/html';
import {
  deliverySummary,
  inboxOf,
  markInboxRead,
  recentDeliveries,
  unreadInboxCount,
} from '../../channels/index.ts';
import { csrfField, formatDate, page, type WebEnv } from '../layout.ts';
import { markdown } from '../markdown.ts';
import { formOf, type PageDeps, scope } from './page-deps.ts';

/**
 * The dashboard inbox: deliveries (a scheduled run's output, a reminder, an alert) that no
 * chat channel took, or whose arrival is unknown, kept until read; and the latest deliveries'
 * receipts — where each went and whether it arrived. A user sees their own; the owner everyone's.
 */
export function inboxRoutes(deps: PageDeps): Hono<WebEnv> {
  const app = new Hono<WebEnv>();
  const { database } = deps;

  app.get('/inbox', async (c) => {
    const session = c.get('session');
    const userId = scope(session);
    const [entries, unread, deliveries] = await Promise.all([
      inboxOf(database, userId),
      unreadInboxCount(database, userId),
      recentDeliveries(database, { userId, limit: 20 }),
    ]);
    return page(c, {
      title: 'Inbox',
      session,
      body: html`<p class="meta" data-unread="${unread}">${unread} unread</p>
        ${
          entries.length
            ? html`${
                unread
                  ? html`<form method="post" action="/inbox/read" class="inline">${csrfField(session)}<button type="submit" class="secondary">Mark all read</button></form>`
                  : ''
              }
            <ul class="memories">${entries.map(
              (entry) => html`<li class="card${entry.readAt ? '' : ' unread'}" data-inbox-id="${entry.id}">
                <p class="meta">${entry.readAt ? '' : html`<span class="badge">unread</span> `}${formatDate(entry.createdAt)}${session.owner ? ` · ${entry.user}` : ''} · ${entry.note}</p>
                <div class="markdown">${markdown(entry.text)}</div>
                ${
                  entry.readAt
                    ? ''
                    : html`<form method="post" action="/inbox/read" class="inline">${csrfField(session)}<input type="hidden" name="id" value="${entry.id}"><button type="submit" class="secondary">Mark read</button></form>`
                }
              </li>`,
            )}</ul>`
            : html`<p class="empty">Nothing waiting. Messages that no chat channel could take — a scheduled run’s output, a reminder, an alert — are kept here.</p>`
        }
        <h2>Latest deliveries</h2>
        ${
          deliveries.length
            ? html`<div class="scroll"><table class="list">
            <thead><tr><th>When</th>${session.owner ? html`<th>User</th>` : ''}<th>What</th><th>Status</th><th>Where</th></tr></thead>
            <tbody>${deliveries.map(
              (delivery) =>
                html`<tr data-delivery-id="${delivery.id}"><td>${formatDate(new Date(delivery.created_at))}</td>${session.owner ? html`<td>${delivery.user}</td>` : ''}<td>${delivery.source}</td><td><span class="badge">${delivery.status}</span></td><td>${deliverySummary(delivery)}</td></tr>`,
            )}</tbody></table></div>`
            : html`<p class="empty">No deliveries yet.</p>`
        }`,
    });
  });

  app.post('/inbox/read', async (c) => {
    const session = c.get('session');
    const form = await formOf(c);
    const id = form.id ? Number(form.id) : undefined;
    if (id !== undefined && !Number.isSafeInteger(id)) return c.redirect('/inbox', 303);
    // A user marks only their own; the owner may mark anyone's.
    await markInboxRead(database, { userId: scope(session), ...(id !== undefined ? { id } : {}) });
    return c.redirect('/inbox', 303);
  });
  return app;
}
