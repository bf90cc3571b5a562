import { cp, lstat, mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Database } from '../db/index.ts';
import { StewardError } from '../errors.ts';
import { STAGING_DIR, userVaultDir, withVaultLock } from '../files/index.ts';
import { filesRoot } from './backup.ts';
import { ownedSkills } from './owned-skills.ts';
import { quoteIdent, readCatalog, storedColumns } from './table-catalog.ts';
import { userDataPlan } from './user-data-plan.ts';

export type ExportReport = {
  userId: string;
  dir: string;
  tables: Array<{ table: string; rows: number }>;
  conversations: number;
  files: number;
  skills: string[];
};

type Row = Record<string, unknown>;

/** Secrets and login material stay out of an export: hashes of tokens, sealed credentials, feed tokens. */
const LEFT_OUT: Readonly<Record<string, readonly string[]>> = {
  api_tokens: ['token_hash'],
  web_sessions: ['id_hash', 'csrf'],
  web_login_codes: ['code_hash'],
  integration_accounts: ['sealed', 'key_id'],
  calendar_feeds: ['token'],
};

/**
 * Writes everything of `userId` into `dir` (which must be empty or absent), and nothing of
 * anyone else: every row of theirs as JSON (`data/<table>.json`), their tasks, memories and
 * conversations as markdown and JSON, their files with every version (`files/`, versions under
 * `files/.archive/`), the skills they own (`skills/`) and their identities (`data/channel_identities.json`).
 */
export async function exportUser(
  deps: { database: Database; dataDir: string; skillsDir: string },
  userId: string,
  dir: string,
): Promise<ExportReport> {
  const known = await deps.database.query(`SELECT 1 FROM ${quoteIdent('users')} WHERE id = $1`, [userId]);
  if (known.length === 0) throw new StewardError('user_not_found', `there is no user ${userId}`);
  const existing = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  if (existing.length > 0)
    throw new StewardError(
      'export_dir_not_empty',
      `${dir} is not empty: give a new or empty folder for the export`,
    );
  await mkdir(path.join(dir, 'data'), { recursive: true, mode: 0o700 });
  const plan = userDataPlan(await readCatalog(deps.database));
  const rowsByTable = new Map<string, Row[]>();
  await deps.database.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    for (const { table, condition } of plan.owned) {
      const leftOut = new Set(LEFT_OUT[table.name] ?? []);
      const columns = storedColumns(table).filter((column) => !leftOut.has(column.name));
      const order = (table.primaryKey.length > 0 ? table.primaryKey : columns.map((column) => column.name))
        .map(quoteIdent)
        .join(', ');
      const rows = await tx.query<{ row: Row }>(
        `SELECT row_to_json(x) AS row FROM (SELECT ${columns.map((column) => quoteIdent(column.name)).join(', ')}
           FROM ${quoteIdent(table.name)} WHERE ${condition} ORDER BY ${order}) x`,
        [userId],
      );
      if (rows.length > 0)
        rowsByTable.set(
          table.name,
          rows.map((item) => item.row),
        );
    }
  });
  for (const [table, rows] of rowsByTable)
    await writeFile(path.join(dir, 'data', `${table}.json`), `${JSON.stringify(rows, null, 2)}\n`);
  const conversations = await writeConversations(dir, rowsByTable);
  await writeFile(path.join(dir, 'tasks.md'), tasksMarkdown(rowsByTable.get('tasks') ?? []));
  await writeFile(path.join(dir, 'memories.md'), memoriesMarkdown(rowsByTable.get('memory_entries') ?? []));
  const root = filesRoot(deps.dataDir);
  const vault = userVaultDir(root, userId);
  const files = await withVaultLock(deps.database, root, userId, () =>
    copyVault(vault, path.join(dir, 'files')),
  );
  const skills = await ownedSkills(deps.skillsDir, userId);
  for (const skill of skills) {
    const target = path.join(dir, 'skills', skill.relative);
    await mkdir(path.dirname(target), { recursive: true });
    await cp(skill.file, target);
  }
  const tables = [...rowsByTable].map(([table, rows]) => ({ table, rows: rows.length }));
  await writeFile(path.join(dir, 'README.md'), readme(userId, tables, conversations, files, skills.length));
  return { userId, dir, tables, conversations, files, skills: skills.map((skill) => skill.name) };
}

async function writeConversations(dir: string, rows: Map<string, Row[]>): Promise<number> {
  const conversations = rows.get('conversations') ?? [];
  const messages = rows.get('messages') ?? [];
  if (conversations.length === 0) return 0;
  await mkdir(path.join(dir, 'conversations'), { recursive: true });
  for (const conversation of conversations) {
    const own = messages.filter((message) => message.conversation_id === conversation.id);
    const name = String(conversation.id).replace(/[^A-Za-z0-9_-]/g, '_');
    await writeFile(
      path.join(dir, 'conversations', `${name}.json`),
      `${JSON.stringify({ conversation, messages: own }, null, 2)}\n`,
    );
    const lines = [
      `# ${conversation.title ?? `Conversation ${conversation.id}`}`,
      '',
      `Channel: ${conversation.channel} · started ${conversation.created_at}`,
      '',
      ...(conversation.summary ? ['## Summary', '', String(conversation.summary), ''] : []),
      ...own
        .filter((message) => message.role === 'user' || message.role === 'assistant')
        .flatMap((message) => [
          `**${message.role === 'user' ? 'You' : 'Steward'}** (${message.created_at}):`,
          '',
          String(message.content),
          '',
        ]),
    ];
    await writeFile(path.join(dir, 'conversations', `${name}.md`), `${lines.join('\n')}\n`);
  }
  return conversations.length;
}

function tasksMarkdown(tasks: Row[]): string {
  const lines = ['# Tasks', ''];
  for (const task of tasks) {
    const done = task.status === 'done' ? 'x' : ' ';
    const due = task.due_date ? `, due ${task.due_date}` : '';
    const archived = task.archived_at ? ', archived' : '';
    lines.push(`- [${done}] ${task.title} (${task.status}, ${task.priority}${due}${archived})`);
    if (task.description) lines.push(`  ${String(task.description).replaceAll('\n', '\n  ')}`);
  }
  if (tasks.length === 0) lines.push('No tasks.');
  return `${lines.join('\n')}\n`;
}

function memoriesMarkdown(memories: Row[]): string {
  const lines = ['# Memories', ''];
  for (const memory of memories) {
    const tags = Array.isArray(memory.tags) && memory.tags.length ? ` [${memory.tags.join(', ')}]` : '';
    const archived = memory.archived_at ? ' (archived)' : '';
    lines.push(`- ${memory.content} — ${memory.category}, importance ${memory.importance}${tags}${archived}`);
  }
  if (memories.length === 0) lines.push('No memories.');
  return `${lines.join('\n')}\n`;
}

/** Copies the vault (files and `.archive` of versions) without its staging area or any link. */
async function copyVault(vault: string, target: string): Promise<number> {
  if (!(await lstat(vault).catch(() => null))?.isDirectory()) return 0;
  let files = 0;
  await cp(vault, target, {
    recursive: true,
    preserveTimestamps: true,
    filter: async (source) => {
      if (path.basename(source) === STAGING_DIR && path.dirname(source) === vault) return false;
      const info = await lstat(source);
      if (info.isFile()) files++;
      return info.isFile() || info.isDirectory();
    },
  });
  return files;
}

function readme(
  userId: string,
  tables: Array<{ table: string; rows: number }>,
  conversations: number,
  files: number,
  skills: number,
): string {
  return `# Steward export of ${userId}

- \`tasks.md\`, \`memories.md\`: your tasks and memories, readable.
- \`conversations/\`: ${conversations} conversation(s), each as markdown and as JSON (every message).
- \`files/\`: ${files} file(s) of your files, every earlier version under \`files/.archive/<path>/vN\`.
- \`skills/\`: ${skills} skill file(s) you own (workflows and learned skills).
- \`data/<table>.json\`: every stored row of yours, table by table (channel identities in
  \`data/channel_identities.json\`). Left out: token and session hashes, and connected accounts'
  encrypted credentials (their provider and account name are in \`data/integration_accounts.json\`).

Rows: ${tables.map((table) => `${table.table} ${table.rows}`).join(', ')}.
`;
}
