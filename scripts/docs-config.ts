// Writes docs/configuration.md from the config schema (`npm run docs:config`). Every setting's
// key, environment variable, type, default and description come from src/config, so the page
// cannot drift: test/docs.test.ts fails when the file is not what this script writes now.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import { ENV_VARS } from '../src/config/load.ts';
import { configSchema } from '../src/config/schema.ts';

export const CONFIGURATION_DOC = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));

export type Setting = { key: string; type: string; default: string; description: string };
type Section = { key: string; description: string; settings: Setting[] };

type Def = {
  type: string;
  innerType?: z.ZodType;
  out?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  entries?: Record<string, string>;
  defaultValue?: unknown;
  coerce?: boolean;
  format?: string;
  checks?: Array<{ _zod: { def: { check: string; value?: unknown; inclusive?: boolean; format?: string } } }>;
};

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Peels default / optional / preprocess layers, keeping the outermost description and default. */
function unwrap(schema: z.ZodType): { core: z.ZodType; description?: string; defaultValue?: unknown } {
  let core = schema;
  let description = schema.description;
  let defaultValue: unknown;
  for (;;) {
    const def = defOf(core);
    if (def.type === 'default' && defaultValue === undefined) defaultValue = def.defaultValue;
    const inner =
      def.type === 'default' || def.type === 'optional' || def.type === 'nullable' || def.type === 'prefault'
        ? def.innerType
        : def.type === 'pipe'
          ? def.out
          : undefined;
    if (!inner) break;
    core = inner;
    description ??= core.description;
  }
  return { core, ...(description ? { description } : {}), defaultValue };
}

function bounds(def: Def): string {
  const parts: string[] = [];
  for (const check of def.checks ?? []) {
    const { check: kind, value, inclusive } = check._zod.def;
    if (kind === 'greater_than') parts.push(`${inclusive ? '≥' : '>'} ${value}`);
    if (kind === 'less_than') parts.push(`${inclusive ? '≤' : '<'} ${value}`);
  }
  return parts.length ? ` ${parts.join(', ')}` : '';
}

function typeName(schema: z.ZodType): string {
  const def = defOf(schema);
  switch (def.type) {
    case 'string':
      if (def.format === 'url') return 'URL';
      if (def.format === 'email') return 'email address';
      return 'string';
    case 'number': {
      const integer = (def.checks ?? []).some((check) => check._zod.def.format === 'safeint');
      return `${integer ? 'integer' : 'number'}${bounds(def)}`;
    }
    case 'boolean':
      return 'boolean';
    case 'enum':
      return Object.values(def.entries ?? {})
        .map((value) => `\`${value}\``)
        .join(' \\| ');
    case 'union':
      return [...new Set((def.options ?? []).map(typeName))].join(' or ');
    case 'array':
      return `list of ${typeName(unwrap(def.element!).core)}`;
    case 'record':
      return `map of ${typeName(unwrap(def.valueType!).core)}`;
    case 'pipe':
      return typeName(def.out!);
    default:
      return def.type;
  }
}

function formatDefault(value: unknown): string {
  if (value === undefined) return 'unset';
  if (Array.isArray(value)) return value.length === 0 ? 'none' : `\`${value.join(',')}\``;
  if (typeof value === 'object' && value !== null && Object.keys(value).length === 0) return 'none';
  return `\`${String(value)}\``;
}

/** Every leaf setting under `schema`, depth first, in declaration order. */
export function collectSettings(schema: z.ZodType, prefix: string): Setting[] {
  const { core, description, defaultValue } = unwrap(schema);
  const def = defOf(core);
  if (def.type === 'object' && !(defOf(schema).type === 'optional' && description)) {
    return Object.entries(def.shape!).flatMap(([name, inner]) =>
      collectSettings(inner, prefix ? `${prefix}.${name}` : name),
    );
  }
  if (def.type === 'array') {
    const element = unwrap(def.element!).core;
    if (defOf(element).type === 'object') {
      return [
        { key: prefix, type: 'list', default: formatDefault(defaultValue), description: description ?? '' },
        ...collectSettings(element, `${prefix}[]`),
      ];
    }
  }
  if (def.type === 'object' && defOf(schema).type === 'optional' && description) {
    // An optional group such as `llm.roles.orchestrator`: one row naming its fields.
    const fields = Object.keys(def.shape!).join(', ');
    return [{ key: prefix, type: `\`{${fields}}\``, default: 'unset', description }];
  }
  if (def.type === 'record' && defOf(unwrap(def.valueType!).core).type === 'enum') {
    const key = `${prefix}.<name>`;
    return [
      {
        key,
        type: typeName(def.valueType!),
        default: formatDefault(defaultValue),
        description: description ?? '',
      },
    ];
  }
  return [
    {
      key: prefix,
      type: typeName(core),
      default: formatDefault(defaultValue),
      description: description ?? '',
    },
  ];
}

function sections(schema: z.ZodType = configSchema): Section[] {
  const shape = defOf(unwrap(schema).core).shape!;
  const top: Setting[] = [];
  const grouped: Section[] = [];
  for (const [key, schema] of Object.entries(shape)) {
    const { core, description } = unwrap(schema);
    if (defOf(core).type === 'object') {
      grouped.push({ key, description: description ?? '', settings: collectSettings(schema, key) });
    } else {
      top.push(...collectSettings(schema, key));
    }
  }
  return [{ key: '', description: 'Server, data and access.', settings: top }, ...grouped];
}

/** Environment variables naming each key (`llm.roles.*.model` matches every role). */
function envNames(key: string): string[] {
  return ENV_VARS.filter(
    (entry) =>
      entry.key === key ||
      entry.key.startsWith(`${key}.`) ||
      (entry.key === 'llm.roles.*.model' && CHAT_ROLE.test(key)),
  ).map((entry) => entry.name);
}

/** `LLM_MODEL` sets the model of every role but embeddings (src/config/load.ts). */
const CHAT_ROLE = /^llm\.roles\.(?!embeddings$)[a-z_]+$/;

/** Settings without a description, and environment variables naming no setting: both must be fixed. */
export function configDocProblems(
  schema: z.ZodType = configSchema,
  envVars: ReadonlyArray<{ name: string; key: string }> = ENV_VARS,
): string[] {
  const settings = sections(schema).flatMap((section) => section.settings);
  const keys = new Set(settings.map((setting) => setting.key));
  return [
    ...settings
      .filter((setting) => !setting.description)
      .map((setting) => `${setting.key} has no description: add .describe('…') to it in src/config`),
    ...envVars
      .filter(
        (entry) =>
          !entry.key.includes('*') && !keys.has(entry.key) && !keys.has(entry.key.replace(/\.[^.]+$/, '')),
      )
      .map((entry) => `${entry.name} names ${entry.key}, which is not a setting`),
  ];
}

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

function table(settings: Setting[]): string {
  const rows = settings.map((setting) => {
    const env =
      envNames(setting.key)
        .map((name) => `\`${name}\``)
        .join(', ') || '—';
    return `| \`${setting.key}\` | ${env} | ${setting.type} | ${setting.default} | ${cell(setting.description)} |`;
  });
  return ['| key | environment | type | default | meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}

const INTRO = `# Configuration

<!-- Generated by scripts/docs-config.ts from src/config (the zod schema): do not edit by hand.
     After changing a setting, run npm run docs:config. -->

Settings come from an optional \`steward.yaml\` in the working directory (another path:
\`STEWARD_CONFIG\`) and from environment variables, which win over the file. A \`.env\` file in the
working directory (\`NAME=value\` lines) is read into the environment by every CLI command; a
variable already set in the real environment wins over it. Everything is validated at start-up:
a bad value stops Steward with exit code 2 and one line naming the key (\`LLM_BASE_URL=localhost:11434\`
is refused: it needs \`http://\`). A port in use and a data dir that cannot be created or written
also stop it with one line and the fix. \`steward doctor\` shows where each setting came from.

The file is watched: a valid change applies without a restart (limits, modes, sentinel, memory
budgets, log level, API token); host, port, database and the LLM endpoint and roster need a
restart. An invalid change is reported in the log and ignored.

The LLM: \`OPENROUTER_API_KEY\` alone uses OpenRouter with a default model roster;
\`LLM_BASE_URL\` (+ \`LLM_API_KEY\`) any OpenAI-compatible server, and then \`LLM_MODEL\` sets the model
of every chat role (orchestrator, sub_agent, compaction, sentinel, transcription) — embeddings
need their own model, \`LLM_EMBEDDINGS_MODEL\`.

Example \`steward.yaml\`:

\`\`\`yaml
llm:
  base_url: http://127.0.0.1:11434/v1     # Ollama
  models:
    - { id: "qwen3:14b", tier: primary, context_window: 32768 }
  roles:
    orchestrator: { model: "qwen3:14b" }
    sub_agent: { model: "qwen3:14b" }
\`\`\`
`;

const OTHER_VARIABLES = `## Other environment variables

| variable | meaning |
|---|---|
| \`STEWARD_CONFIG\` | path of the config file (default \`./steward.yaml\`; optional unless this is set) |
| \`NODE_COMPILE_CACHE\` | where Node keeps compiled sources between starts (default: the system temp dir's \`node-compile-cache\`; \`steward\`, \`npm start\` and the Dockerfile turn the cache on); \`NODE_DISABLE_COMPILE_CACHE=1\` turns it off |
| \`OTEL_EXPORTER_OTLP_TIMEOUT\`, \`OTEL_EXPORTER_OTLP_COMPRESSION\`, \`OTEL_RESOURCE_ATTRIBUTES\`, \`OTEL_BSP_SCHEDULE_DELAY\`, \`OTEL_BSP_EXPORT_TIMEOUT\`, \`OTEL_BSP_MAX_QUEUE_SIZE\`, \`OTEL_BSP_MAX_EXPORT_BATCH_SIZE\` | the standard OpenTelemetry settings, honoured as the SDK defines them |
`;

/** The whole of docs/configuration.md. */
export function renderConfigurationDoc(): string {
  const body = sections().map((section) => {
    const title = section.key ? `## \`${section.key}\`` : '## General';
    return [title, '', section.description, '', table(section.settings)]
      .filter((line, index) => index !== 2 || line)
      .join('\n');
  });
  return `${[INTRO, ...body, OTHER_VARIABLES]
    .join('\n\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}

if (import.meta.main) {
  const problems = configDocProblems();
  if (problems.length > 0) {
    process.stderr.write(`${problems.join('\n')}\n`);
    process.exit(1);
  }
  writeFileSync(CONFIGURATION_DOC, renderConfigurationDoc());
  process.stdout.write(`wrote ${CONFIGURATION_DOC}\n`);
}
