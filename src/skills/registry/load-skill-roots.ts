import { type Dirent, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { type Logger, silentLogger } from '../../logging/index.ts';
import type { Diagnostic, DomainIndex, SkillDefinition, SkillSnapshot, SkillSource } from '../types.ts';
import { domainFolderProblem, parseDomainIndexFile, parseSkillFile } from './parse-skill-file.ts';
import { NAME_SEGMENT } from './skill-name.ts';

export type SkillRoot = { dir: string; source: SkillSource };

export type LoadSkillRootsOptions = {
  logger?: Logger;
  /** The snapshot being replaced: an invalid file keeps its last valid version from here. */
  previous?: SkillSnapshot;
};

const INDEX_FILE = 'SKILL.md';
const KEPT = ' (still using the last valid version)';

type SkillParse = ReturnType<typeof parseSkillFile>;
type IndexParse = ReturnType<typeof parseDomainIndexFile>;
type CachedParse = { text: string; source: SkillSource; result: SkillParse | IndexParse };

// Parsing YAML dominates a load; a reload re-reads every file but re-parses only those whose
// text changed since the snapshot it replaces. Held weakly, so it dies with that snapshot.
const parsesBySnapshot = new WeakMap<SkillSnapshot, Map<string, CachedParse>>();

/**
 * Loads every skill and domain index under `roots` into a new snapshot. Never throws for bad
 * files: each problem is a diagnostic, and one bad file never stops the others. User roots
 * are applied after built-in ones, so a user skill overrides a built-in of the same name.
 */
export function loadSkillRoots(
  roots: readonly SkillRoot[],
  options: LoadSkillRootsOptions = {},
): SkillSnapshot {
  const logger = options.logger ?? silentLogger();
  const previous = options.previous;
  const previousSkills = new Map([...(previous?.skills.values() ?? [])].map((skill) => [skill.path, skill]));
  const previousIndexes = new Map(
    [...(previous?.domains.values() ?? [])].filter((index) => index.path).map((index) => [index.path, index]),
  );
  const diagnostics: Diagnostic[] = [];
  const skills = new Map<string, SkillDefinition>();
  const indexes = new Map<string, DomainIndex>();
  const previousParses = previous ? parsesBySnapshot.get(previous) : undefined;
  const parses = new Map<string, CachedParse>();
  const cached = <Result extends SkillParse | IndexParse>(
    file: string,
    text: string,
    source: SkillSource,
    parse: () => Result,
  ): Result => {
    const hit = previousParses?.get(file);
    const result = hit && hit.text === text && hit.source === source ? (hit.result as Result) : parse();
    parses.set(file, { text, source, result });
    return result;
  };

  const ordered = [
    ...roots.filter((root) => root.source === 'builtin'),
    ...roots.filter((root) => root.source === 'user'),
  ];
  for (const root of ordered) {
    const found = scanRoot(path.resolve(root.dir));
    diagnostics.push(...found.diagnostics);

    for (const file of found.skillFiles) {
      const text = readText(file.path, diagnostics);
      if (text === null) continue;
      const parsed = cached(file.path, text, root.source, () =>
        parseSkillFile({ ...file, text, source: root.source }),
      );
      const kept = parsed.skill ? null : previousSkills.get(file.path);
      diagnostics.push(...(kept ? markKept(parsed.diagnostics) : parsed.diagnostics));
      const skill = parsed.skill ?? kept;
      if (!skill) continue;
      const shadowed = skills.get(skill.name);
      if (shadowed && previous?.skills.get(skill.name)?.path !== skill.path) {
        logger.info(
          { skill: skill.name, overridden: shadowed.path, by: skill.path },
          `${skill.source} skill ${skill.name} overrides the ${shadowed.source} one`,
        );
      }
      // Only its owner sees an owned file: everyone else keeps seeing what it replaced.
      skills.set(skill.name, withShadowed(skill, shadowed));
    }

    for (const file of found.indexFiles) {
      const text = readText(file.path, diagnostics);
      if (text === null) continue;
      const parsed = cached(file.path, text, root.source, () =>
        parseDomainIndexFile({ ...file, text, source: root.source }),
      );
      const kept = parsed.index ? null : previousIndexes.get(file.path);
      diagnostics.push(...(kept ? markKept(parsed.diagnostics) : parsed.diagnostics));
      const index = parsed.index ?? kept;
      if (index) indexes.set(index.domain, index);
    }
  }

  const byDomain = new Map<string, SkillDefinition[]>();
  for (const skill of skills.values())
    byDomain.set(skill.domain, [...(byDomain.get(skill.domain) ?? []), skill]);
  const domains = new Map<string, DomainIndex>();
  for (const domain of [...new Set([...indexes.keys(), ...byDomain.keys()])].sort()) {
    domains.set(domain, indexes.get(domain) ?? generatedIndex(domain, byDomain.get(domain) ?? []));
  }

  const snapshot: SkillSnapshot = Object.freeze({
    version: (previous?.version ?? 0) + 1,
    skills: new Map([...skills.entries()].sort(([a], [b]) => compare(a, b))),
    domains,
    diagnostics: Object.freeze(diagnostics.sort(compareDiagnostics)),
  });
  parsesBySnapshot.set(snapshot, parses);
  return snapshot;
}

/** `skill` as loaded over `shadowed`; the same object unless an owned file replaced a skill. */
function withShadowed(skill: SkillDefinition, shadowed: SkillDefinition | undefined): SkillDefinition {
  if (skill.owner !== undefined && shadowed) return { ...skill, shadows: shadowed.shadows ?? shadowed };
  if (!skill.shadows) return skill;
  // A kept last valid version may still name what it replaced then.
  const { shadows: _stale, ...own } = skill;
  return own;
}

/** The index of a domain that has no SKILL.md: its skills, sorted, with their descriptions. */
export function generatedIndex(domain: string, skills: readonly SkillDefinition[]): DomainIndex {
  const sorted = [...skills].sort((a, b) => compare(a.name, b.name));
  const actions = sorted.map((skill) => skill.action);
  const shown = actions.length > 6 ? [...actions.slice(0, 6), '…'] : actions;
  const body = [
    `# ${domain}`,
    '',
    '## Available Skills',
    '',
    ...sorted.map((skill) => `- ${skill.name} — ${skill.description}`),
  ].join('\n');
  return Object.freeze({
    domain,
    description: `${sorted.length} skill${sorted.length === 1 ? '' : 's'}: ${shown.join(', ')}`,
    body,
    source: sorted.some((skill) => skill.source === 'user') ? 'user' : 'builtin',
    path: null,
    generated: true,
  });
}

type FoundFiles = {
  skillFiles: Array<{ path: string; domain: string; action: string }>;
  indexFiles: Array<{ path: string; domain: string }>;
  diagnostics: Diagnostic[];
};

function scanRoot(root: string): FoundFiles {
  const found: FoundFiles = { skillFiles: [], indexFiles: [], diagnostics: [] };
  for (const entry of listDir(root)) {
    const full = path.join(root, entry.name);
    const kind = kindOf(entry, full);
    if (kind === 'file') {
      if (entry.name.endsWith('.md')) {
        found.diagnostics.push({
          path: full,
          severity: 'warning',
          message: 'not inside a domain folder, so ignored: move it to <domain>/<action>.md',
        });
      }
      continue;
    }
    if (kind !== 'dir') continue;
    const domain = entry.name;
    for (const inner of listDir(full)) {
      const file = path.join(full, inner.name);
      const innerKind = kindOf(inner, file);
      if (innerKind === 'dir') {
        for (const nested of nestedMarkdown(file, 4)) {
          found.diagnostics.push({
            path: nested,
            severity: 'warning',
            message: `nested deeper than one domain folder, so ignored: move it to ${domain}/<action>.md`,
          });
        }
        continue;
      }
      if (innerKind !== 'file' || !inner.name.endsWith('.md')) continue;
      if (inner.name === INDEX_FILE) {
        found.indexFiles.push({ path: file, domain });
      } else if (!NAME_SEGMENT.test(domain)) {
        found.diagnostics.push({ path: file, severity: 'error', message: domainFolderProblem(domain) });
      } else {
        found.skillFiles.push({ path: file, domain, action: inner.name.slice(0, -'.md'.length) });
      }
    }
  }
  return found;
}

function nestedMarkdown(dir: string, depth: number): string[] {
  if (depth === 0) return [];
  return listDir(dir).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    const kind = kindOf(entry, full);
    if (kind === 'dir') return nestedMarkdown(full, depth - 1);
    return kind === 'file' && entry.name.endsWith('.md') ? [full] : [];
  });
}

/** Sorted entries, skipping dotfiles (editor swap files, `.git`). A missing dir is empty. */
function listDir(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => !entry.name.startsWith('.'))
      .sort((a, b) => compare(a.name, b.name));
  } catch {
    return [];
  }
}

function kindOf(entry: Dirent, full: string): 'file' | 'dir' | 'other' {
  if (entry.isSymbolicLink()) {
    try {
      const stats = statSync(full);
      return stats.isDirectory() ? 'dir' : stats.isFile() ? 'file' : 'other';
    } catch {
      return 'other';
    }
  }
  return entry.isDirectory() ? 'dir' : entry.isFile() ? 'file' : 'other';
}

function readText(file: string, diagnostics: Diagnostic[]): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    // Removed between listing and reading: the next reload sees it gone.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    diagnostics.push({
      path: file,
      severity: 'error',
      message: `cannot read the file: ${(error as Error).message}`,
    });
    return null;
  }
}

function markKept(diagnostics: Diagnostic[]): Diagnostic[] {
  return diagnostics.map((diagnostic) =>
    diagnostic.severity === 'error' ? { ...diagnostic, message: diagnostic.message + KEPT } : diagnostic,
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  return compare(a.path, b.path) || compare(a.severity, b.severity) || compare(a.message, b.message);
}
