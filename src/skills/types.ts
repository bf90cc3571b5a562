import type { z } from 'zod';
import type { Database } from '../db/index.ts';
import type { FilesService } from '../files/index.ts';
import type { Integrations, WebAccess } from '../integrations/index.ts';
import type { Logger } from '../logging/index.ts';

/** What every skill call returns. Expected failures are `status: 'error'` with a fix in `content`. */
export type SkillResult = {
  status: 'ok' | 'error';
  content: string;
  filesProduced?: string[];
  sideEffects?: string[];
  metadata?: Record<string, unknown>;
  /**
   * A mutating handler's short identifying detail of what it acted on, for the user's receipt
   * line (`Alpha plan (t_4kx9m2qa)`, `"Q3 report" to bob@example.com`). Without it the receipt
   * shows the command's main flag. Plain text, one line; never a secret.
   */
  receipt?: string;
};

/** Where a skill comes from: a built-in or user skill file, or a tool of an MCP server. */
export type SkillSource = 'builtin' | 'user' | 'mcp';

/** One skill file, `skills/<domain>/<action>.md`, after validation. */
export type SkillDefinition = {
  /** `<domain>.<action>` */
  name: string;
  domain: string;
  action: string;
  description: string;
  readonly: boolean;
  /** Route calls through the sentinel. Defaults to true for mutating skills. */
  confirm: boolean;
  /** Handler name from frontmatter; defaults to the skill name. */
  handler: string;
  /** A 5-field cron expression (validated); the skill runs on it as its owner's workflow. */
  schedule?: string;
  timezone?: string;
  /** The user a scheduled skill belongs to (frontmatter `owner`; default the owner user `local`). */
  owner?: string;
  /** The skill of the same name an owned user file replaced (a built-in): what other users see. */
  shadows?: SkillDefinition;
  /** How late a missed scheduled run may still run at start (frontmatter `catch_up`; default 1 h). */
  catchUpSeconds?: number;
  /** Per-call timeout from frontmatter `timeout` (seconds in the file). */
  timeoutMs?: number;
  tags: string[];
  author?: string;
  created?: string;
  /** A learned skill (skills.write): the turn it was learned in, and when (ISO time). */
  learnedFrom?: string;
  learnedAt?: string;
  /** The markdown body: the help page, served as is. */
  body: string;
  /** The first line of the body's `## Usage` section (or `<name> [flags]`). */
  usage: string;
  source: SkillSource;
  path: string;
};

/** `skills/<domain>/SKILL.md`, or one generated when the file is missing. */
export type DomainIndex = {
  domain: string;
  description: string;
  body: string;
  source: SkillSource;
  path: string | null;
  generated: boolean;
  /** Set when the domain cannot be used now (an MCP server that failed): why. */
  unavailable?: string;
};

export type Diagnostic = { path: string; severity: 'error' | 'warning'; message: string };

/** An immutable view of every loaded skill. Swapped whole on reload. */
export type SkillSnapshot = {
  readonly version: number;
  readonly skills: ReadonlyMap<string, SkillDefinition>;
  readonly domains: ReadonlyMap<string, DomainIndex>;
  readonly diagnostics: readonly Diagnostic[];
};

/** Skills and domains contributed by something other than skill files. */
export type ProvidedSkills = {
  skills: readonly SkillDefinition[];
  domains: readonly DomainIndex[];
  diagnostics?: readonly Diagnostic[];
};

/**
 * A source of skills besides the skill roots (MCP servers). The registry merges what every
 * provider returns into each snapshot; a provider calls `SkillRegistry.refresh()` when its
 * skills change. `provide` must be cheap and must not throw.
 */
export interface SkillProvider {
  provide(): ProvidedSkills;
}

/** Services a handler may use. Later capabilities add optional members. */
export type SkillServices = {
  database: Database;
  /**
   * Embeds a search query (memory.search). Resolves null when no embeddings model is
   * configured; may reject when the model fails, and callers then search without vectors.
   */
  embedder?: ((text: string, signal?: AbortSignal) => Promise<{ vector: number[]; model: string } | null>) & {
    /** Whether an embeddings model is configured (see memory's QueryEmbedder). */
    configured?: () => boolean;
  };
  /** Email, calendar and CRM providers per user (the email, calendar and crm skills). */
  integrations?: Integrations;
  /** Each user's files, the content index and Drive sync (files.* skills). */
  files?: FilesService;
  /** Web search, page fetching through the SSRF guard, and the daily budget of web calls (web.* skills). */
  web?: WebAccess;
  /**
   * Fetches a URL the model supplied through the SSRF guard: no loopback, private or link-local
   * target unless `security.ssrf_allow` opens it. Rejects with a message saying why.
   */
  /**
   * Where workflow.build and skills.write write their pages (the user skills directory), the
   * built-in directory whose names they never take, and the skills they check pages against.
   * `reload` makes a written page live at once (without it, the watcher does).
   */
  workflows?: { skillsDir: string; builtinDir: string; skills: () => SkillSnapshot; reload?: () => void };
  fetchUrl?: (
    url: string,
    init?: { method?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal },
  ) => Promise<Response>;
};

export type SkillUser = { id: string; timezone: string };

/** Everything a handler learns about the call it serves. */
export type SkillContext = {
  user: SkillUser;
  conversationId: string | null;
  channel: string;
  /** The calling sub-agent's id, or null for the orchestrator and the CLI. */
  agentId: string | null;
  turnId: string | null;
  /** The execution row of this call; handlers may reference it in their own records. */
  executionId: string;
  signal: AbortSignal;
  services: SkillServices;
  logger: Logger;
  now: () => Date;
};

/**
 * A built-in skill's code. `flags` is a zod object over the parsed flags (snake_case keys)
 * and owns validation, coercion and defaults. `execute` returns expected failures as
 * `{status: 'error'}` and must honour `ctx.signal`.
 */
export type SkillHandler<Flags extends z.ZodObject = z.ZodObject> = {
  name: string;
  flags: Flags;
  execute(flags: z.infer<Flags>, ctx: SkillContext): Promise<SkillResult>;
};

/** Helps a handler file keep its flags type inferred. */
export function defineHandler<Flags extends z.ZodObject>(handler: SkillHandler<Flags>): SkillHandler<Flags> {
  return handler;
}

export const ok = (content: string, extra: Omit<SkillResult, 'status' | 'content'> = {}): SkillResult => ({
  status: 'ok',
  content,
  ...extra,
});

export const fail = (content: string, extra: Omit<SkillResult, 'status' | 'content'> = {}): SkillResult => ({
  status: 'error',
  content,
  ...extra,
});
