import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { RESERVED_ACTIONS } from '../registry/index.ts';
import { type ImportRisk, scanFile } from './import-risks.ts';

/** A file of an AgentSkills folder, and what the import does with it. */
export type BundledFile = {
  /** Path inside the skill folder (`references/FAQ.md`). */
  file: string;
  size: number;
  /** `inline`: a text reference appended to the page; `keep`: copied aside for reference, never run. */
  handling: 'inline' | 'keep';
};

/** One AgentSkills folder read for import. `problem` is set when it cannot be imported. */
export type AgentSkillPlan = {
  source: string;
  /** The AgentSkills name (`pdf-processing`). */
  originalName: string;
  /** The Steward skill it becomes (`agentskills.pdf_processing`). */
  name: string;
  description: string;
  body: string;
  author?: string;
  license?: string;
  files: BundledFile[];
  risks: ImportRisk[];
  problem?: string;
};

const AGENT_SKILL_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const TEXT = /\.(md|markdown|txt|text|rst|csv|tsv|json|ya?ml|toml|xml|html?)$/i;
const INLINE_MAX = 32_000;
const INLINE_TOTAL = 64_000;
const MAX_FILES = 200;

/**
 * Reads AgentSkills folders at `source`: the folder itself when it holds SKILL.md, else each
 * folder below it that does. Reads files only; never runs anything. Throws when there is no
 * SKILL.md to read at all.
 */
export function readAgentSkills(source: string, domain: string): AgentSkillPlan[] {
  const root = path.resolve(source);
  if (!existsSync(root)) throw new Error(`${root} does not exist`);
  const folders = existsSync(path.join(root, 'SKILL.md'))
    ? [root]
    : readdirSync(root, { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && existsSync(path.join(root, entry.name, 'SKILL.md')))
        .map((entry) => path.join(root, entry.name))
        .sort();
  if (folders.length === 0)
    throw new Error(
      `no SKILL.md in ${root} or in the folders directly below it: point at an AgentSkills folder`,
    );
  const taken = new Set<string>();
  return folders.map((folder) => {
    const plan = readOne(folder, domain, taken);
    taken.add(plan.name);
    return plan;
  });
}

function readOne(folder: string, domain: string, taken: ReadonlySet<string>): AgentSkillPlan {
  const text = readFileSync(path.join(folder, 'SKILL.md'), 'utf8');
  const { data, body, error } = splitFrontmatter(text);
  const originalName = typeof data.name === 'string' ? data.name.trim() : '';
  const description =
    typeof data.description === 'string' ? data.description.replace(/\s+/g, ' ').trim() : '';
  const metadata = (data.metadata ?? {}) as Record<string, unknown>;
  const files = listFiles(folder);
  let inlined = 0;
  const bundled: BundledFile[] = files.map(({ file, size }) => {
    const inline =
      TEXT.test(file) && !file.startsWith('scripts/') && size <= INLINE_MAX && inlined + size <= INLINE_TOTAL;
    if (inline) inlined += size;
    return { file, size, handling: inline ? 'inline' : 'keep' };
  });
  const risks = [
    ...scanFile('SKILL.md', text, false),
    ...files.flatMap(({ file, executable }) => scanFile(file, readText(path.join(folder, file)), executable)),
  ];
  const problem =
    error ??
    (!originalName
      ? 'SKILL.md has no name in its frontmatter'
      : !AGENT_SKILL_NAME.test(originalName) || originalName.length > 64
        ? `name "${originalName}" is not an AgentSkills name (lower-case letters, digits and single hyphens, up to 64)`
        : !description
          ? 'SKILL.md has no description in its frontmatter'
          : files.length > MAX_FILES
            ? `the folder has more than ${MAX_FILES} files`
            : undefined);
  let action = (originalName || path.basename(folder)).toLowerCase().replace(/[^a-z0-9_]/g, '_');
  if (!/^[a-z]/.test(action)) action = `skill_${action}`;
  if (RESERVED_ACTIONS.includes(action)) action = `${action}_skill`;
  let name = `${domain}.${action}`;
  for (let suffix = 2; taken.has(name); suffix++) name = `${domain}.${action}_${suffix}`;
  return {
    source: folder,
    originalName,
    name,
    description: description.length > 1024 ? `${description.slice(0, 1023)}…` : description,
    body: body.trim(),
    ...(typeof metadata.author === 'string' ? { author: metadata.author } : {}),
    ...(typeof data.license === 'string' ? { license: data.license } : {}),
    files: bundled,
    risks,
    ...(problem ? { problem } : {}),
  };
}

function splitFrontmatter(text: string): { data: Record<string, unknown>; body: string; error?: string } {
  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text);
  if (!match) return { data: {}, body: text, error: 'SKILL.md does not start with a --- frontmatter block' };
  try {
    const data = parseYaml(match[1]!) as unknown;
    if (!data || typeof data !== 'object' || Array.isArray(data))
      return { data: {}, body: match[2]!, error: 'the SKILL.md frontmatter is not a mapping' };
    return { data: data as Record<string, unknown>, body: match[2]! };
  } catch (error) {
    return {
      data: {},
      body: match[2]!,
      error: `the SKILL.md frontmatter is not valid YAML: ${(error as Error).message.split('\n')[0]}`,
    };
  }
}

type FoundFile = { file: string; size: number; executable: boolean };

/** Every file below the skill folder except SKILL.md, sorted; symbolic links are not followed. */
function listFiles(folder: string): FoundFile[] {
  const found: FoundFile[] = [];
  const visit = (dir: string, depth: number) => {
    if (depth > 6 || found.length > MAX_FILES) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const file = path.relative(folder, full).split(path.sep).join('/');
      if (entry.isDirectory()) visit(full, depth + 1);
      else if (entry.isFile() && file !== 'SKILL.md') {
        const stats = statSync(full);
        found.push({ file, size: stats.size, executable: (stats.mode & 0o111) !== 0 });
      }
    }
  };
  visit(folder, 0);
  return found.sort((a, b) => (a.file < b.file ? -1 : 1));
}

function readText(file: string): string | null {
  const buffer = readFileSync(file);
  if (buffer.subarray(0, 8_000).includes(0)) return null;
  return buffer.toString('utf8');
}
