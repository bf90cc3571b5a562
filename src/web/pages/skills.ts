import { existsSync } from 'node:fs';
import { Hono } from 'hono';
import { html } from 'hono/html';
import {
  disabledSkills,
  loadBuiltinHandlers,
  type SkillUse,
  type SkillVersion,
  setSkillEnabled,
  skillOwners,
  skillsVisibleTo,
  skillUse,
  templateSkills,
} from '../../skills/index.ts';
import { ensureUser, userIdProblem } from '../../users/index.ts';
import { csrfField, page, type WebEnv } from '../layout.ts';
import { skillHelp, skillName } from '../skill-help.ts';
import { formOf, type PageDeps, scope } from './page-deps.ts';

/** The built-in skill pages shipped with the package. */
const BUILTIN_SKILLS = new URL('../../../skills/', import.meta.url);

/**
 * Every loaded skill with its source, kind, breaker and use (runs, failures, last use), and
 * the problems in skill files; each learned skill's history, with rollback to any version.
 */
export function skillRoutes(deps: PageDeps): Hono<WebEnv> {
  const app = new Hono<WebEnv>();

  app.get('/skills', async (c) => {
    const session = c.get('session');
    // The owner sees every user's owned skills (labelled below); anyone else only shared skills and their own.
    const snapshot = session.owner ? deps.skills() : skillsVisibleTo(deps.skills(), session.userId);
    const userId = scope(session) ?? undefined;
    // Whose switches are shown: the session's own; the owner may pick any user (?for=ID).
    const requested = session.owner ? (c.req.query('for') ?? '').trim() : '';
    const switchesFor = requested && !userIdProblem(requested) ? requested : session.userId;
    const notice = c.req.query('notice');
    const handlers = await loadBuiltinHandlers();
    const [breakerRows, usage, ledger, disabled] = await Promise.all([
      deps.breakers(),
      skillUse(deps.database, {
        userId,
        templates: templateSkills(snapshot, (handler) => handlers.has(handler)),
        owners: skillOwners(snapshot),
      }),
      deps.learned ? deps.learned.latest(userId) : Promise.resolve([]),
      disabledSkills(deps.database, switchesFor),
    ]);
    const breakers = new Map(breakerRows.map((row) => [row.skill, row.state]));
    const latest = new Map(ledger.map((version) => [`${version.owner}\u0000${version.name}`, version]));
    const retired = ledger.filter((version) => version.change === 'retire');
    const skills = [...snapshot.skills.values()].sort((a, b) => a.name.localeCompare(b.name));
    // A user skill overrides a built-in when the package ships a page of the same name.
    const overrides = (skill: (typeof skills)[number]) =>
      skill.source === 'user' && existsSync(new URL(`${skill.domain}/${skill.action}.md`, BUILTIN_SKILLS));
    return page(c, {
      title: 'Skills',
      session,
      body: html`${notice ? html`<p class="notice" role="status">${notice.slice(0, 300)}</p>` : ''}
        ${
          session.owner
            ? html`<form method="get" action="/skills" class="search"><label for="for">Switches for user</label><input id="for" name="for" value="${switchesFor}" maxlength="100"><button type="submit" class="secondary">Show</button></form>`
            : ''
        }
        ${
          snapshot.diagnostics.length
            ? html`<section class="card"><h2>Problems in skill files</h2><ul class="diagnostics">${snapshot.diagnostics.map(
                (d) =>
                  html`<li class="${d.severity}"><strong>${d.severity}</strong> <code>${d.path}</code>: ${d.message}</li>`,
              )}</ul></section>`
            : html`<p>Every skill file loaded without problems.</p>`
        }
        <div class="scroll"><table class="list stack skills-table">
          <thead><tr><th>Skill</th><th>Source</th><th>Kind</th><th>Breaker</th><th>Runs</th><th>Failed</th><th>Last used</th><th>For ${switchesFor}</th></tr></thead>
          <tbody>${skills.map((skill) => {
            const use: SkillUse | undefined = usage.get(skill.name);
            const learned = skill.owner ? latest.get(`${skill.owner}\u0000${skill.name}`) : undefined;
            return html`<tr id="skill-${skill.name}" data-skill="${skill.name}"><td class="skill-cell"><details><summary>${skillName(skill.name)}</summary><div class="markdown help">${skillHelp(skill.body)}</div></details><p class="meta description">${skill.description}</p></td>
              <td>${overrides(skill) ? 'override' : skill.source === 'builtin' ? 'built-in' : skill.source}${skill.owner ? ` (owner ${skill.owner})` : ''}${learned ? html`<br><a href="${historyHref(skill.name, learned.owner)}">learned · version ${learned.version} · history</a>` : ''}</td>
              <td>${skill.readonly ? 'read-only' : 'mutating'}</td>
              <td><span class="badge breaker-${breakers.get(skill.name) ?? 'closed'}">${breakers.get(skill.name) ?? 'closed'}</span></td>
              <td class="runs">${use?.runs ?? 0}</td><td class="failures">${use?.failures ?? 0}</td>
              <td>${use?.lastUsed ? minute(use.lastUsed) : 'never'}</td>
              <td>${switchForm(session, switchesFor, skill.name, !disabled.has(skill.name))}</td></tr>`;
          })}</tbody></table></div>
        ${
          retired.length
            ? html`<section class="card"><h2>Retired learned skills</h2><ul>${retired.map(
                (version) =>
                  html`<li><code>${version.name}</code>${session.owner ? ` (owner ${version.owner})` : ''}: retired ${minute(version.at)} — ${version.reason}. <a href="${historyHref(version.name, version.owner)}">History and restore</a></li>`,
              )}</ul></section>`
            : ''
        }`,
    });
  });

  app.post('/skills/switch', async (c) => {
    const session = c.get('session');
    const form = await formOf(c);
    // A user switches their own skills; the owner anyone's.
    const user = session.owner ? (form.user ?? '').trim() || session.userId : session.userId;
    const back = (notice: string) =>
      c.redirect(
        `/skills?for=${encodeURIComponent(user)}&notice=${encodeURIComponent(notice)}#skill-${encodeURIComponent(form.skill ?? '')}`,
        303,
      );
    const problem = userIdProblem(user);
    if (problem) return back(problem);
    const visible = session.owner ? deps.skills() : skillsVisibleTo(deps.skills(), session.userId);
    const skill = visible.skills.get(form.skill ?? '');
    if (!skill) return back(`No skill "${(form.skill ?? '').slice(0, 80)}".`);
    const enabled = form.enabled === 'yes';
    await ensureUser(deps.database, user);
    const now = deps.now ?? (() => new Date());
    await setSkillEnabled(deps.database, {
      userId: user,
      skill: skill.name,
      enabled,
      by: `user:${session.userId}`,
      at: now(),
    });
    return back(
      enabled
        ? `${skill.name} is on for ${user}.`
        : `${skill.name} is off for ${user}: the assistant is refused it for them until it is turned on again.`,
    );
  });

  app.get('/skills/history', async (c) => {
    const session = c.get('session');
    const name = c.req.query('name') ?? '';
    const owner = session.owner ? (c.req.query('owner') ?? session.userId) : session.userId;
    const versions = deps.learned ? await deps.learned.history(owner, name) : [];
    const notice = c.req.query('notice');
    if (versions.length === 0) {
      return page(c, {
        title: 'Skill history',
        session,
        status: 404,
        body: html`<p class="empty">No history for <code>${name}</code>: only learned skills (written with skills.write) have one. <a href="/skills">All skills</a></p>`,
      });
    }
    const current = versions.at(-1)!;
    return page(c, {
      title: `History of ${name}`,
      session,
      body: html`${notice ? html`<p class="notice" role="status">${notice.slice(0, 300)}</p>` : ''}
        <p>Learned skill of <strong>${owner}</strong>, ${current.change === 'retire' ? 'retired' : `now version ${current.version}`}. Rolling back writes that version again as a new one: the history only grows. <a href="/skills">All skills</a></p>
        <div class="scroll"><table class="list history">
          <thead><tr><th>Version</th><th>When</th><th>Who</th><th>Change</th><th>Why</th><th></th></tr></thead>
          <tbody>${[...versions].reverse().map((version) => versionRow(version, current, session, name, owner))}</tbody>
        </table></div>`,
    });
  });

  app.post('/skills/rollback', async (c) => {
    const session = c.get('session');
    const form = await formOf(c);
    const name = form.name ?? '';
    const owner = session.owner ? form.owner || session.userId : session.userId;
    const back = (notice: string) =>
      c.redirect(`${historyHref(name, owner)}&notice=${encodeURIComponent(notice)}`, 303);
    if (!deps.learned) return back('This server keeps no skill history.');
    const to = Number(form.to);
    if (!Number.isInteger(to) || to < 1) return back('Choose a version to roll back to.');
    const now = deps.now ?? (() => new Date());
    const change = await deps.learned.rollback(
      { userId: owner, author: session.userId, turnId: null, at: now() },
      { name, to, ...(form.reason?.trim() ? { reason: form.reason.trim() } : {}) },
    );
    return back(
      change.ok
        ? `Rolled back to version ${to}: ${name} is now version ${change.version.version}.`
        : `Not rolled back: ${change.problem}`,
    );
  });
  return app;
}

function versionRow(
  version: SkillVersion,
  current: SkillVersion,
  session: Parameters<typeof csrfField>[0],
  name: string,
  owner: string,
) {
  const canRollBack = version.change !== 'retire' && version.version !== current.version;
  return html`<tr data-version="${version.version}"><td>${version.version}</td><td>${minute(version.at)}</td><td>${version.author}</td><td>${version.change.replace('_', ' ')}</td>
    <td>${version.reason}${version.diff ? html`<details><summary>Changes</summary><pre class="diff">${version.diff}</pre></details>` : ''}</td>
    <td>${
      canRollBack
        ? html`<form method="post" action="/skills/rollback" class="inline">${csrfField(session)}<input type="hidden" name="name" value="${name}"><input type="hidden" name="owner" value="${owner}"><input type="hidden" name="to" value="${version.version}"><button type="submit" class="secondary">Roll back to ${version.version}</button></form>`
        : version.version === current.version
          ? 'current'
          : ''
    }</td></tr>`;
}

function switchForm(session: Parameters<typeof csrfField>[0], user: string, skill: string, on: boolean) {
  return html`<form method="post" action="/skills/switch" class="inline switch">${csrfField(session)}<input type="hidden" name="user" value="${user}"><input type="hidden" name="skill" value="${skill}"><input type="hidden" name="enabled" value="${on ? 'no' : 'yes'}"><span class="badge ${on ? 'on' : 'off'}">${on ? 'on' : 'off'}</span><button type="submit" class="secondary" aria-label="${on ? 'Turn off' : 'Turn on'} ${skill} for ${user}">${on ? 'Turn off' : 'Turn on'}</button></form>`;
}

function historyHref(name: string, owner: string): string {
  return `/skills/history?name=${encodeURIComponent(name)}&owner=${encodeURIComponent(owner)}`;
}

/** "2026-11-27 10:15 UTC" */
function minute(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
