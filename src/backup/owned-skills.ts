import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseFrontmatter } from '../skills/index.ts';

export type OwnedSkill = { name: string; file: string; relative: string };

/** Skill files in the user skills dir whose frontmatter names `userId` as `owner` (their workflows, their learned skills). */
export async function ownedSkills(skillsDir: string, userId: string): Promise<OwnedSkill[]> {
  const entries = await readdir(skillsDir, { withFileTypes: true, recursive: true }).catch(() => []);
  const owned: OwnedSkill[] = [];
  for (const entry of entries) {
    if (!entry.isFile() || !entry.name.endsWith('.md') || entry.name === 'SKILL.md') continue;
    const file = path.join(entry.parentPath, entry.name);
    const parsed = parseFrontmatter(await readFile(file, 'utf8').catch(() => ''));
    if (parsed.status !== 'ok' || parsed.data.owner !== userId) continue;
    const relative = path.relative(skillsDir, file);
    const name =
      typeof parsed.data.name === 'string'
        ? parsed.data.name
        : relative.replace(/\.md$/, '').split(path.sep).join('.');
    owned.push({ name, file, relative });
  }
  return owned.sort((a, b) => a.relative.localeCompare(b.relative));
}

/**
 * Removes the owned skill files, and the lines naming them from their domain's SKILL.md (a
 * workflow index lists each workflow with its description). Returns the skill names removed.
 */
export async function removeOwnedSkills(skills: OwnedSkill[]): Promise<string[]> {
  const byIndex = new Map<string, string[]>();
  for (const skill of skills) {
    await rm(skill.file, { force: true });
    const index = path.join(path.dirname(skill.file), 'SKILL.md');
    byIndex.set(index, [...(byIndex.get(index) ?? []), skill.name]);
  }
  for (const [index, names] of byIndex) {
    const text = await readFile(index, 'utf8').catch(() => null);
    if (text === null) continue;
    const mentions = names.map(
      (name) => new RegExp(`(^|[^a-z0-9_.])${name.replaceAll('.', '\\.')}($|[^a-z0-9_])`),
    );
    const kept = text.split('\n').filter((line) => !mentions.some((mention) => mention.test(line)));
    if (kept.length !== text.split('\n').length) await writeFile(index, kept.join('\n'));
  }
  return skills.map((skill) => skill.name);
}
