import { z } from 'zod';

/**
 * Zod builders for command flags. The parser hands values over as a string, `true` (a bare
 * flag) or an array (multi-value or repeated flags); these coerce them to what handlers want.
 */

const single = (value: unknown) => (Array.isArray(value) ? value.join(' ') : value);

export const flag = {
  string: () =>
    z.preprocess(single, z.string({ error: 'needs a text value' }).trim().min(1, 'needs a non-empty value')),
  text: () => z.preprocess(single, z.string({ error: 'needs a text value' })),
  int: (options: { min?: number; max?: number } = {}) => {
    let schema = z.coerce.number({ error: 'needs a whole number' }).int('needs a whole number');
    if (options.min !== undefined) schema = schema.min(options.min, `must be at least ${options.min}`);
    if (options.max !== undefined) schema = schema.max(options.max, `must be at most ${options.max}`);
    return z.preprocess(single, schema);
  },
  number: (options: { min?: number; max?: number } = {}) => {
    let schema = z.coerce.number({ error: 'needs a number' });
    if (options.min !== undefined) schema = schema.min(options.min, `must be at least ${options.min}`);
    if (options.max !== undefined) schema = schema.max(options.max, `must be at most ${options.max}`);
    return z.preprocess(single, schema);
  },
  bool: () =>
    z.preprocess(
      (value) => {
        if (value === true || value === 'true' || value === 'yes' || value === '1') return true;
        if (value === 'false' || value === 'no' || value === '0') return false;
        return value;
      },
      z.boolean({ error: 'is a switch: give it alone, or as --flag=true / --flag=false' }),
    ),
  enum: <const Values extends readonly [string, ...string[]]>(values: Values) =>
    z.preprocess(
      (value) => (typeof value === 'string' ? value.toLowerCase() : single(value)),
      z.enum(values, { error: `must be one of: ${values.join(', ')}` }),
    ),
  /** A list: `--tags a b`, `--tags a --tags b` or `--tags a,b`. */
  list: () =>
    z.preprocess(
      (value) => {
        const items = Array.isArray(value) ? value : typeof value === 'string' ? [value] : value;
        if (!Array.isArray(items)) return items;
        return items
          .flatMap((item) => String(item).split(','))
          .map((item) => item.trim())
          .filter((item) => item.length > 0);
      },
      z.array(z.string(), { error: 'needs one or more values' }),
    ),
};
