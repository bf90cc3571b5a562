import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { listMigrations } from '../src/db/index.ts';

/*
 * The dependency rules of DESIGN §2 and STYLE.md, checked on the source:
 * - each folder belongs to one layer, and imports only from its own layer or those below it
 *   (platform ← domains ← engine ← operations ← surfaces);
 * - a folder's index.ts is its public API: no file imports from deep inside another folder;
 * - no import cycles between files;
 * - each folder owns its tables: SQL naming a table appears only in the folder that owns it.
 */

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/** Every table the migrations create, and the folder under src/ that owns it. */
const OWNERS: Record<string, string> = {
  inbound_rate_windows: 'security',
  users: 'users',
  channel_identities: 'users',
  api_tokens: 'users',
  conversations: 'memory',
  messages: 'memory',
  turns: 'agents',
  conversation_summaries: 'memory',
  memory_entries: 'memory',
  memory_embeddings: 'memory',
  memory_term_stats: 'memory',
  memory_user_stats: 'memory',
  message_term_stats: 'memory',
  message_user_stats: 'memory',
  word_forms: 'memory',
  entities: 'memory',
  entity_relations: 'memory',
  entity_mentions: 'memory',
  tasks: 'tasks',
  task_dependencies: 'tasks',
  task_comments: 'tasks',
  task_history: 'tasks',
  skill_executions: 'skills',
  skill_circuit_breakers: 'skills',
  sentinel_decisions: 'skills',
  skill_versions: 'skills',
  disabled_skills: 'skills',
  llm_calls: 'llm',
  integration_accounts: 'integrations',
  calendar_events: 'integrations',
  calendar_feeds: 'integrations',
  inbound_messages: 'channels',
  outbox_messages: 'channels',
  deliveries: 'channels',
  inbox_messages: 'channels',
  pairing_codes: 'channels',
  webhook_rejections: 'channels',
  channel_cursors: 'channels',
  steward_migrations: 'db',
  file_operations: 'files',
  content_index: 'files',
  drive_sync_files: 'files',
  workflow_schedules: 'workflows',
  workflow_runs: 'workflows',
  task_reminders: 'workflows',
  web_sessions: 'web',
  web_login_codes: 'web',
  voice_clips: 'voice',
  web_call_days: 'integrations',
};

/** The layers, lowest first, and their folders. */
const LAYERS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['platform', ['config', 'db', 'jobs', 'logging', 'security', 'time']],
  ['domains', ['users', 'llm', 'tasks', 'files', 'memory', 'integrations', 'voice']],
  ['engine', ['skills', 'agents', 'workflows']],
  ['operations', ['observability', 'backup']],
  ['surfaces', ['channels', 'server', 'web', 'mcp', 'cli']],
];
const layerOf = (folder: string): number => LAYERS.findIndex(([, folders]) => folders.includes(folder));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [full] : [];
  });
}

const files = sourceFiles(SRC);
const folderOf = (file: string): string | null => {
  const parts = path.relative(SRC, file).split(path.sep);
  return parts.length > 1 ? parts[0]! : null;
};

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'/g),
    ...text.matchAll(/import\(\s*'(\.[^']+)'\s*\)/g),
  ].map((match) => match[1]!);
  return specifiers.map((specifier) => path.normalize(path.join(path.dirname(file), specifier)));
}

describe('architecture', () => {
  it('imports other folders only through their index.ts', () => {
    const deep: string[] = [];
    for (const file of files) {
      const from = folderOf(file);
      for (const target of importsOf(file)) {
        const to = folderOf(target);
        if (!to || to === from || !target.startsWith(SRC)) continue;
        if (path.relative(path.join(SRC, to), target) !== 'index.ts') {
          deep.push(`${path.relative(SRC, file)} → ${path.relative(SRC, target)}`);
        }
      }
    }
    expect(deep).toEqual([]);
  });

  it('places every folder in a layer', () => {
    const folders = [...new Set(files.map(folderOf).filter((folder) => folder !== null))];
    expect(folders.filter((folder) => layerOf(folder) < 0)).toEqual([]);
  });

  it('imports only from its own layer or the layers below it', () => {
    const upward: string[] = [];
    for (const file of files) {
      const from = folderOf(file);
      if (!from) continue;
      for (const target of importsOf(file)) {
        const to = folderOf(target);
        if (to && target.startsWith(SRC) && layerOf(to) > layerOf(from)) {
          upward.push(
            `${path.relative(SRC, file)} (${LAYERS[layerOf(from)]![0]}) → ${path.relative(SRC, target)}`,
          );
        }
      }
    }
    expect(upward).toEqual([]);
  });

  it('has no import cycle', () => {
    const graph = new Map(
      files.map((file) => [file, importsOf(file).filter((target) => target.startsWith(SRC))]),
    );
    const state = new Map<string, 'visiting' | 'done'>();
    const cycles: string[] = [];
    const stack: string[] = [];
    const visit = (file: string) => {
      state.set(file, 'visiting');
      stack.push(file);
      for (const next of graph.get(file) ?? []) {
        if (!graph.has(next)) continue;
        if (state.get(next) === 'visiting') {
          cycles.push(
            [...stack.slice(stack.indexOf(next)), next].map((entry) => path.relative(SRC, entry)).join(' → '),
          );
        } else if (!state.has(next)) visit(next);
      }
      stack.pop();
      state.set(file, 'done');
    };
    for (const file of files) if (!state.has(file)) visit(file);
    expect(cycles).toEqual([]);
  });

  it('knows the owner of every table the migrations create', () => {
    const created = listMigrations().flatMap((migration) =>
      [...migration.sql.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?([a-z_]+)/gi)].map((match) => match[1]!),
    );
    expect(created.filter((table) => !(table in OWNERS))).toEqual([]);
  });

  it('queries each table only from the folder that owns it', () => {
    const trespass: string[] = [];
    const pattern = new RegExp(
      `\\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\\s+(${Object.keys(OWNERS).join('|')})\\b`,
      'gi',
    );
    for (const file of files) {
      const folder = folderOf(file);
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(pattern)) {
        const table = match[1]!.toLowerCase();
        if (OWNERS[table] !== folder)
          trespass.push(`${path.relative(SRC, file)} uses ${table} (owned by ${OWNERS[table]}/)`);
      }
    }
    expect([...new Set(trespass)]).toEqual([]);
  });
});
