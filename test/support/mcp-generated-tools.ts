import type { Tool } from '@modelcontextprotocol/sdk/types.js';

/*
 * Synthetic MCP tools shaped like real servers' (a verb, an object, 2–6 described properties,
 * enums, lists, a nested filter), for the prefix-size benchmark. Deterministic for (count, seed).
 */

const VERBS = [
  'create',
  'list',
  'get',
  'update',
  'delete',
  'search',
  'archive',
  'assign',
  'comment',
  'export',
];
const NOUNS = [
  ['issue', 'pull_request', 'branch', 'commit'],
  ['event', 'calendar', 'attendee', 'reminder'],
  ['document', 'folder', 'permission', 'revision'],
  ['contact', 'deal', 'company', 'note'],
  ['ticket', 'queue', 'macro', 'agent'],
];

type Property = Record<string, unknown>;

const PROPERTY_POOL: Array<[string, Property]> = [
  [
    'id',
    { type: 'string', description: 'Identifier of the record, as returned by the list and search tools.' },
  ],
  ['title', { type: 'string', description: 'A short human-readable title shown in lists.' }],
  ['body', { type: 'string', description: 'The full text content. Markdown is supported.' }],
  [
    'status',
    { type: 'string', enum: ['open', 'in_progress', 'blocked', 'done'], description: 'Workflow state.' },
  ],
  ['labels', { type: 'array', items: { type: 'string' }, description: 'Labels to attach, by name.' }],
  ['assigneeId', { type: 'string', description: 'The user responsible; omit to leave unassigned.' }],
  ['dueDate', { type: 'string', format: 'date', description: 'Due date in ISO 8601 (YYYY-MM-DD).' }],
  [
    'limit',
    { type: 'integer', minimum: 1, maximum: 100, description: 'Maximum results per page (default 20).' },
  ],
  ['cursor', { type: 'string', description: 'Opaque cursor from a previous page, for pagination.' }],
  ['includeArchived', { type: 'boolean', description: 'Include archived records in the results.' }],
  [
    'filter',
    {
      type: 'object',
      description: 'Structured filter applied on the server.',
      properties: {
        createdAfter: { type: 'string', format: 'date-time' },
        createdBefore: { type: 'string', format: 'date-time' },
        owner: { type: 'string' },
      },
    },
  ],
  ['query', { type: 'string', description: 'Free-text query matched against titles and bodies.' }],
  ['priority', { type: 'string', enum: ['low', 'medium', 'high', 'urgent'], description: 'Priority level.' }],
  ['notify', { type: 'boolean', description: 'Send notifications to watchers about this change.' }],
];

export function generatedTools(count: number, seed = 0): Tool[] {
  const nouns = NOUNS[seed % NOUNS.length]!;
  return Array.from({ length: count }, (_, index) => {
    const verb = VERBS[index % VERBS.length]!;
    const noun = nouns[Math.floor(index / VERBS.length) % nouns.length]!;
    const size = 2 + ((index * 7 + seed) % 5);
    const properties: Record<string, Property> = {};
    for (let offset = 0; offset < size; offset++) {
      const [name, schema] = PROPERTY_POOL[(index * 3 + offset * 5 + seed) % PROPERTY_POOL.length]!;
      properties[name] = schema;
    }
    const readOnly = verb === 'list' || verb === 'get' || verb === 'search';
    return {
      name: `${verb}_${noun}${index >= VERBS.length * nouns.length ? `_${index}` : ''}`,
      description: `${verb[0]!.toUpperCase()}${verb.slice(1)} a ${noun.replace('_', ' ')}. Returns the ${noun.replace('_', ' ')} as JSON with its id, title, status and timestamps; errors explain which field was wrong.`,
      inputSchema: { type: 'object', properties, required: Object.keys(properties).slice(0, 1) },
      ...(readOnly ? { annotations: { readOnlyHint: true } } : {}),
    } satisfies Tool;
  });
}
