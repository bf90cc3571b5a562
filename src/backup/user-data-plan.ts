import { type Catalog, type CatalogTable, quoteIdent } from './table-catalog.ts';

/** One table's rows of one user: `condition` is SQL over the table's columns with `$1` = the user id. */
export type UserTable = { table: CatalogTable; condition: string; references: string[] };

export type UserDataPlan = {
  /** Tables holding rows of users, ordered so that a table comes before every table its condition reads. */
  owned: UserTable[];
  /** Tables with no user's rows, each with why. */
  shared: Array<{ name: string; reason: string }>;
  /** Tables neither derived as a user's nor known as shared: a new table to classify (a test fails on them). */
  unclassified: string[];
};

/** Tables that hold nobody's personal data, and why. Every other table must derive as a user's. */
export const SHARED_TABLES: Readonly<Record<string, string>> = {
  steward_migrations: 'the schema version',
  skill_circuit_breakers: "each skill's health, for everyone",
  webhook_rejections: 'counts of refused webhooks per channel and reason',
  channel_cursors: "where Discord's and Matrix's event streams and the email channel's inbox were read to",
  word_forms: 'the irregular and informal word forms recall treats as one word (English, not anyone’s)',
};

/**
 * Rows keyed by a user's channel identity or a derived key rather than a user column: messages
 * from their accounts received before the sender was linked, replies to their direct chats,
 * pairing requests, and their rate-limit windows.
 */
const IDENTITIES = `(SELECT channel, external_id FROM ${quoteIdent('channel_identities')} WHERE user_id = $1)`;
const EXTRA_CONDITIONS: Readonly<Record<string, { condition: string; references: string[] }>> = {
  inbound_messages: {
    condition: `(channel, sender_id) IN ${IDENTITIES}`,
    references: ['channel_identities'],
  },
  pairing_codes: { condition: `(channel, sender_id) IN ${IDENTITIES}`, references: ['channel_identities'] },
  outbox_messages: {
    condition: `(channel, chat_id) IN (SELECT channel, direct_chat_id FROM ${quoteIdent('channel_identities')} WHERE user_id = $1 AND direct_chat_id IS NOT NULL)`,
    references: ['channel_identities'],
  },
  inbound_rate_windows: { condition: `key = 'user:' || $1`, references: [] },
};

/**
 * Which rows of every table are one user's, derived from the schema: a column `user_id` (or
 * any column referencing `users`), the `users` row itself, and rows whose foreign key points
 * at such a row (transitively) — plus the identity-keyed rows above. A new table with a
 * `user_id` column is covered without a change here.
 */
export function userDataPlan(catalog: Catalog): UserDataPlan {
  const byName = new Map(catalog.tables.map((table) => [table.name, table]));
  const direct = new Map<string, string[]>();
  for (const table of catalog.tables) {
    const columns = new Set<string>();
    if (table.name === 'users') columns.add('id');
    for (const column of table.columns) if (column.name === 'user_id') columns.add(column.name);
    for (const key of table.foreignKeys)
      if (key.table === 'users' && key.columns.length === 1) columns.add(key.columns[0]!);
    if (columns.size > 0) direct.set(table.name, [...columns]);
  }
  // A table is a user's when it has a user column, an identity-keyed rule, or a key into such a table.
  const owned = new Set([
    ...direct.keys(),
    ...Object.keys(EXTRA_CONDITIONS).filter((name) => byName.has(name)),
  ]);
  for (let changed = true; changed; ) {
    changed = false;
    for (const table of catalog.tables) {
      if (owned.has(table.name)) continue;
      if (table.foreignKeys.some((key) => key.table !== table.name && owned.has(key.table))) {
        owned.add(table.name);
        changed = true;
      }
    }
  }
  const conditions = new Map<string, { condition: string; references: string[] }>();
  const conditionOf = (name: string, seen: Set<string>): string => {
    const known = conditions.get(name);
    if (known) return known.condition;
    const table = byName.get(name)!;
    const parts: string[] = [];
    const references: string[] = [];
    for (const column of direct.get(name) ?? []) parts.push(`${quoteIdent(column)} = $1`);
    const extra = EXTRA_CONDITIONS[name];
    if (extra) {
      parts.push(extra.condition);
      references.push(...extra.references);
    }
    for (const key of table.foreignKeys) {
      // Rows go before the rows they reference: a parent table is deleted after this one.
      if (key.table !== name && owned.has(key.table)) references.push(key.table);
      if (key.table === name || key.table === 'users' || !owned.has(key.table) || seen.has(key.table))
        continue;
      const parent = conditionOf(key.table, new Set([...seen, name]));
      const columns = key.columns.map(quoteIdent).join(', ');
      const referenced = key.referencedColumns.map(quoteIdent).join(', ');
      parts.push(`(${columns}) IN (SELECT ${referenced} FROM ${quoteIdent(key.table)} WHERE ${parent})`);
      references.push(key.table, ...(conditions.get(key.table)?.references ?? []));
    }
    const condition = parts.map((part) => `(${part})`).join(' OR ') || 'false';
    conditions.set(name, { condition, references: [...new Set(references)] });
    return condition;
  };
  for (const name of owned) conditionOf(name, new Set([name]));
  // Delete order: a table before every table its condition reads (users last of all).
  const ordered: UserTable[] = [];
  const placed = new Set<string>();
  const place = (name: string, visiting: Set<string>) => {
    if (placed.has(name) || visiting.has(name)) return;
    visiting.add(name);
    for (const other of owned)
      if (other !== name && conditions.get(other)!.references.includes(name)) place(other, visiting);
    placed.add(name);
    ordered.push({ table: byName.get(name)!, ...conditions.get(name)! });
  };
  for (const name of [...owned].sort()) place(name, new Set());
  const shared = catalog.tables
    .filter((table) => !owned.has(table.name) && SHARED_TABLES[table.name] !== undefined)
    .map((table) => ({ name: table.name, reason: SHARED_TABLES[table.name]! }));
  const unclassified = catalog.tables
    .filter((table) => !owned.has(table.name) && SHARED_TABLES[table.name] === undefined)
    .map((table) => table.name);
  return { owned: ordered, shared, unclassified };
}
