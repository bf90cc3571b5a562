import { z } from 'zod';
import type { JsonSchema, ToolDefinition } from '../llm/index.ts';

/** JSON Schema for a zod object, as the model sees it (input side; no `$schema` noise). */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }) as JsonSchema;
  delete json.$schema;
  if (json.type === 'object' && json.additionalProperties === undefined) json.additionalProperties = false;
  return json;
}

export function toolFromZod(name: string, description: string, schema: z.ZodType): ToolDefinition {
  return { name, description, parameters: jsonSchemaOf(schema) };
}

/** Tools sorted by name, so the prompt prefix stays byte-identical (cacheable). */
export function sortTools(tools: ToolDefinition[]): ToolDefinition[] {
  return [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Explains invalid tool arguments to the model: which field, what is wrong. Returned as the
 * tool result so the model can correct itself.
 */
export function describeArgumentErrors(tool: string, error: z.ZodError): string {
  const parts = error.issues.map((issue) => {
    const field = issue.path.length ? issue.path.join('.') : '(arguments)';
    if (issue.code === 'unrecognized_keys') return `unknown field(s) ${issue.keys.join(', ')}`;
    return `${field}: ${issue.message}`;
  });
  return `Invalid arguments for ${tool}: ${parts.join('; ')}. Call it again with corrected arguments.`;
}

/** A result of a call whose arguments were repaired starts by saying so. */
export function withArgumentsNote(note: string | undefined, content: string): string {
  return note ? `(${note})\n${content}` : content;
}
