import { existsSync } from 'node:fs';
import { Hono } from 'hono';
import { html } from 'hono/html';
import { skillsVisibleTo } from '../../skills/index.ts';
import { page, type WebEnv } from '../layout.ts';
import { markdown } from '../markdown.ts';
import type { PageDeps } from './page-deps.ts';

/** The built-in skill pages shipped with the package. */
const BUILTIN_SKILLS = new URL('../../../skills/', import.meta.url);

/** Every loaded skill with its source, kind and breaker, and the problems in skill files. */
export function skillRoutes(deps: PageDeps): Hono<WebEnv> {
  const app = new Hono<WebEnv>();

  app.get('/skills', async (c) => {
    const session = c.get('session');
    // The owner sees every user's workflows (labelled below); anyone else only shared skills and their own.
    const snapshot = session.owner ? deps.skills() : skillsVisibleTo(deps.skills(), session.userId);
    const breakers = new Map((await deps.breakers()).map((row) => [row.skill, row.state]));
    const skills = [...snapshot.skills.values()].sort((a, b) => a.name.localeCompare(b.name));
    // A user skill overrides a built-in when the package ships a page of the same name.
    const overrides = (skill: (typeof skills)[number]) =>
      skill.source === 'user' && existsSync(new URL(`${skill.domain}/${skill.action}.md`, BUILTIN_SKILLS));
    return page(c, {
      title: 'Skills',
      session,
      body: html`${
        snapshot.diagnostics.length
          ? html`<section class="card"><h2>Problems in skill files</h2><ul class="diagnostics">${snapshot.diagnostics.map(
              (d) =>
                html`<li class="${d.severity}"><strong>${d.severity}</strong> <code>${d.path}</code>: ${d.message}</li>`,
            )}</ul></section>`
          : html`<p>Every skill file loaded without problems.</p>`
      }
        <div class="scroll"><table class="list">
          <thead><tr><th>Skill</th><th>Source</th><th>Kind</th><th>Breaker</th><th>Description</th></tr></thead>
          <tbody>${skills.map(
            (
              skill,
            ) => html`<tr id="skill-${skill.name}"><td><details><summary><code>${skill.name}</code></summary><div class="markdown">${markdown(skill.body)}</div></details></td>
              <td>${overrides(skill) ? 'override' : skill.source === 'builtin' ? 'built-in' : skill.source}${skill.owner ? ` (owner ${skill.owner})` : ''}</td>
              <td>${skill.readonly ? 'read-only' : 'mutating'}</td>
              <td><span class="badge breaker-${breakers.get(skill.name) ?? 'closed'}">${breakers.get(skill.name) ?? 'closed'}</span></td>
              <td>${skill.description}</td></tr>`,
          )}</tbody></table></div>`,
    });
  });
  return app;
}
