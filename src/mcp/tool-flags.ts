import { z } from 'zod';
import { flagNameFor } from './tool-names.ts';

type JsonSchema = Record<string, unknown>;
type Kind = 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object' | 'any';

/** One flag generated from a property of an MCP tool's input schema. */
export type ToolFlag = {
  /** The property name in the tool's schema (`dueDate`). */
  property: string;
  /** As written in a command, without dashes (`due-date`). */
  flag: string;
  /** The key the command parser files it under (`due_date`). */
  key: string;
  kind: Kind;
  itemKind?: Kind;
  values?: string[];
  required: boolean;
  description: string;
};

export type ToolFlags = {
  flags: ToolFlag[];
  /** Validates and coerces parsed command flags (strict: unknown flags are errors). */
  schema: z.ZodObject;
  /** Validated flags → the tool's `arguments` object, under the schema's own property names. */
  toArguments(values: Record<string, unknown>): Record<string, unknown>;
};

/**
 * Flags from a tool's input schema: property names in kebab-case, booleans as switches,
 * arrays as repeated flags, objects (and anything without a simple type) as JSON text.
 * Nested values are checked by the server itself; this only shapes the top level.
 */
export function toolFlags(inputSchema: JsonSchema | undefined): ToolFlags {
  const properties = (inputSchema?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set(Array.isArray(inputSchema?.required) ? (inputSchema.required as string[]) : []);
  const flags: ToolFlag[] = [];
  const shape: Record<string, z.ZodType> = {};
  for (const [property, schema] of Object.entries(properties)) {
    let { flag, key } = flagNameFor(property);
    if (key === 'help' || shape[key]) {
      flag = `${flag}-${flags.length + 1}`;
      key = flag.replaceAll('-', '_');
    }
    const kind = kindOf(schema);
    const itemKind = kind === 'array' ? kindOf((schema.items ?? {}) as JsonSchema) : undefined;
    const values = enumOf(schema);
    const entry: ToolFlag = {
      property,
      flag,
      key,
      kind,
      required: required.has(property),
      description: typeof schema.description === 'string' ? oneLine(schema.description) : '',
      ...(itemKind ? { itemKind } : {}),
      ...(values ? { values } : {}),
    };
    flags.push(entry);
    const value = valueSchema(kind, itemKind, values);
    shape[key] = entry.required ? present.pipe(value) : value.optional();
  }
  return {
    flags,
    schema: z.object(shape).strict(),
    toArguments: (validated) => {
      const args: Record<string, unknown> = {};
      for (const entry of flags)
        if (validated[entry.key] !== undefined) args[entry.property] = validated[entry.key];
      return args;
    },
  };
}

/** `--title <text> [--due-date <text>] [--tag <text>]... [--pinned]`, required flags first. */
export function usageOf(flags: readonly ToolFlag[]): string {
  const ordered = [...flags.filter((flag) => flag.required), ...flags.filter((flag) => !flag.required)];
  return ordered
    .map((flag) => {
      const written = flag.kind === 'boolean' ? `--${flag.flag}` : `--${flag.flag} ${placeholder(flag)}`;
      const repeated = flag.kind === 'array' ? '...' : '';
      return flag.required ? `${written}${repeated}` : `[${written}]${repeated}`;
    })
    .join(' ');
}

/** One `## Flags` line per flag: type, whether required, and the schema's description. */
export function flagLines(flags: readonly ToolFlag[]): string[] {
  return flags.map((flag) => {
    const type =
      flag.kind === 'boolean'
        ? 'switch'
        : flag.kind === 'array'
          ? `${flag.itemKind === 'object' || flag.itemKind === 'any' ? 'JSON' : flag.itemKind} list, repeat the flag`
          : flag.kind === 'object' || flag.kind === 'any'
            ? 'JSON'
            : flag.values
              ? `one of ${flag.values.join(', ')}`
              : flag.kind;
    const description = flag.description ? ` — ${flag.description}` : '';
    return `- \`--${flag.flag}\` (${type}${flag.required ? ', required' : ''})${description}`;
  });
}

function placeholder(flag: ToolFlag): string {
  if (flag.values) return `<${flag.values.join('|')}>`;
  const kind = flag.kind === 'array' ? (flag.itemKind ?? 'any') : flag.kind;
  return kind === 'string' ? '<text>' : kind === 'object' || kind === 'any' ? '<json>' : `<${kind}>`;
}

function kindOf(schema: JsonSchema): Kind {
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter(
    (type) => type !== undefined && type !== 'null',
  );
  if (types.length === 1 && typeof types[0] === 'string') {
    const type = types[0];
    if (['string', 'number', 'integer', 'boolean', 'array', 'object'].includes(type)) return type as Kind;
  }
  if (types.length === 0) {
    const options = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
    if (Array.isArray(options)) {
      const kinds = new Set(options.map(kindOf).filter((kind) => kind !== 'any'));
      if (kinds.size === 1) return [...kinds][0]!;
    }
    if (enumOf(schema)) return 'string';
    if (schema.properties) return 'object';
  }
  return 'any';
}

function enumOf(schema: JsonSchema): string[] | undefined {
  const values = schema.enum;
  return Array.isArray(values) && values.length > 0 && values.every((value) => typeof value === 'string')
    ? (values as string[])
    : undefined;
}

/** An absent required flag fails as `invalid_type` with no input: what the executor words as "missing". */
const present = z.unknown().superRefine((value, ctx) => {
  if (value === undefined)
    ctx.addIssue({ code: 'invalid_type', expected: 'nonoptional', input: undefined, message: 'required' });
});

const single = (value: unknown) => (Array.isArray(value) ? value.join(' ') : value);

// Failures are custom or format issues, never `invalid_type`, which the executor's flag
// messages read as "missing".
function valueSchema(kind: Kind, itemKind: Kind | undefined, values: string[] | undefined): z.ZodType {
  if (kind === 'array') {
    const item = valueSchema(itemKind ?? 'any', undefined, undefined);
    return z.preprocess(
      (value) => (typeof value === 'string' ? [value] : value),
      z
        .custom<unknown[]>(
          (value) => Array.isArray(value),
          'needs one or more values: repeat the flag for each',
        )
        .pipe(z.array(item)),
    );
  }
  if (kind === 'string') {
    if (values) {
      return z.preprocess(
        single,
        z.custom<string>((value) => values.includes(value as string), `must be one of: ${values.join(', ')}`),
      );
    }
    return z.preprocess(
      single,
      z.custom<string>((value) => typeof value === 'string', 'needs a text value'),
    );
  }
  if (kind === 'number' || kind === 'integer') {
    const pattern = kind === 'integer' ? /^\s*-?\d+\s*$/ : /^\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;
    const message = `needs a${kind === 'integer' ? ' whole' : ''} number`;
    return z.preprocess(
      single,
      z
        .custom<string>((value) => typeof value === 'string' && pattern.test(value), message)
        .transform(Number),
    );
  }
  if (kind === 'boolean') {
    return z.preprocess(
      (value) => {
        if (value === true || value === 'true' || value === 'yes' || value === '1') return true;
        if (value === 'false' || value === 'no' || value === '0') return false;
        return value;
      },
      z.custom<boolean>(
        (value) => typeof value === 'boolean',
        'is a switch: give it alone, or as --flag=true / --flag=false',
      ),
    );
  }
  if (kind === 'object') {
    return z.preprocess(
      (value) => parseJson(single(value)),
      z.custom<Record<string, unknown>>(
        (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
        `needs a JSON object as text, e.g. '{"key": "value"}'`,
      ),
    );
  }
  return z.preprocess(
    (value) => {
      const text = single(value);
      return typeof text === 'string' && /^\s*[[{]/.test(text) ? parseJson(text) : text;
    },
    z.custom<unknown>((value) => value !== undefined, 'needs a value (JSON for lists and objects)'),
  );
}

function parseJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function oneLine(text: string): string {
  const line = text.trim().split(/\n\s*\n|\n/)[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
