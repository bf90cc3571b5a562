import { Hono } from 'hono';
import { html } from 'hono/html';
import { listUserIds } from '../../users/index.ts';
import { csrfField, formatDate, page, type WebEnv } from '../layout.ts';
import { formOf, type PageDeps } from './page-deps.ts';

/** Each channel's status, and (for the owner) the pairing requests to approve. */
export function channelRoutes(deps: PageDeps): Hono<WebEnv> {
  const app = new Hono<WebEnv>();

  app.get('/channels', async (c) => {
    const session = c.get('session');
    const statuses = deps.channels ? await deps.channels.status() : [];
    const pending = session.owner && deps.channels ? await deps.channels.pending() : [];
    const users = pending.length ? (await listUserIds(deps.database)).filter((id) => id !== 'local') : [];
    const notice = c.req.query('notice');
    return page(c, {
      title: 'Channels',
      session,
      body: html`${notice ? html`<p class="notice" role="status">${notice.slice(0, 300)}</p>` : ''}
        <div class="scroll"><table class="list">
          <thead><tr><th>Channel</th><th>Configured</th><th>Mode</th><th>Backlog</th><th>Failed</th><th>Rejected</th><th>Last in</th><th>Last out</th><th>Problems</th></tr></thead>
          <tbody>${statuses.map(
            (s) =>
              html`<tr data-channel="${s.channel}"><td>${s.channel}</td><td>${s.configured ? 'yes' : 'no'}</td><td>${s.mode ?? ''}</td><td>${s.backlog}</td><td>${s.failed}</td><td>${s.rejected}</td><td>${formatDate(s.lastInboundAt)}</td><td>${formatDate(s.lastOutboundAt)}</td><td>${s.problems.join(' ')}</td></tr>`,
          )}</tbody></table></div>
        ${
          session.owner
            ? html`<h2>Pairing requests</h2>${
                pending.length
                  ? html`<ul class="pairings">${pending.map(
                      (
                        p,
                      ) => html`<li class="card">${p.channel} · ${p.senderName ?? p.senderId} · code <code>${p.code}</code> · expires ${formatDate(p.expiresAt)}
                    <form method="post" action="/channels/pairing/approve" class="inline">${csrfField(session)}<input type="hidden" name="code" value="${p.code}"><label>as <select name="as" aria-label="approve ${p.code} as"><option value="">a new user (${p.channel}:${p.senderId})</option><option value="local">me, the owner (shares my memory and tasks)</option>${users.map((id) => html`<option value="${id}">${id}</option>`)}</select></label> <button type="submit">Approve</button></form></li>`,
                    )}</ul>`
                  : html`<p class="empty">No pairing requests are waiting.</p>`
              }`
            : ''
        }`,
    });
  });

  app.post('/channels/pairing/approve', async (c) => {
    const session = c.get('session');
    if (!session.owner || !deps.channels) {
      return c.redirect(
        `/channels?notice=${encodeURIComponent('Only the owner approves pairing requests.')}`,
        303,
      );
    }
    const form = await formOf(c);
    const code = (form.code ?? '').slice(0, 50);
    const joinTo = (form.as ?? '').slice(0, 200) || undefined;
    const approval = await deps.channels.approvePairing(code, { as: joinTo });
    const notice = !approval.ok
      ? approval.problem
      : joinTo
        ? `Approved: ${approval.request.channel}:${approval.request.senderId} joined ${approval.userId} and shares its memory, tasks and history.`
        : `Approved: ${approval.userId} can now talk to Steward.`;
    return c.redirect(`/channels?notice=${encodeURIComponent(notice)}`, 303);
  });
  return app;
}
