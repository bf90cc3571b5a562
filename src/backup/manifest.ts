import { z } from 'zod';

export const MANIFEST_ENTRY = 'manifest.json';
export const MANIFEST_FORMAT = 'steward-backup';
export const FORMAT_VERSION = 1;

const columnSchema = z.object({ name: z.string(), type: z.string() });

/** The first entry of every backup: what made it, the schema version and what it holds. */
export const manifestSchema = z.object({
  format: z.literal(MANIFEST_FORMAT),
  format_version: z.number().int(),
  steward_version: z.string(),
  created_at: z.string(),
  database: z.object({
    backend: z.enum(['pglite', 'postgres']),
    vector: z.boolean(),
    /** The applied migration names: the schema version. */
    migrations: z.array(z.string()),
    tables: z.array(
      z.object({
        name: z.string(),
        entry: z.string(),
        columns: z.array(columnSchema),
        rows: z.number().int().min(0),
        sha256: z.string(),
      }),
    ),
    sequences: z.array(z.object({ name: z.string(), last_value: z.number().nullable() })),
  }),
  credentials: z.object({
    encrypted: z.literal(true),
    secret_key_included: z.literal(false),
    /** Fingerprints of the keys that sealed the stored credentials (the key itself is not here). */
    key_ids: z.array(z.string()),
    note: z.string(),
  }),
  /** What a restore does not bring back, and why. */
  not_included: z.array(z.string()),
});
export type BackupManifest = z.infer<typeof manifestSchema>;

/** Entry names inside an archive. */
export const DB_PREFIX = 'db/';
export const FILES_PREFIX = 'files/';
export const SKILLS_PREFIX = 'skills/';

export const NOT_INCLUDED = [
  'the secret key (STEWARD_SECRET_KEY or <data dir>/secret.key): stored credentials stay encrypted and need the same key after a restore',
  'queued background jobs (the pgboss schema): they are derived work (compaction, indexing, embeddings, deliveries) that the restored server schedules again; scheduled workflows come back from their skill files and workflow_schedules',
  'configuration (steward.yaml, environment) and logs',
  'files kept on Google Drive (they stay in Drive)',
];
