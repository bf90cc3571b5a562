import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../errors.ts';
import type { McpServerConfig } from './schema.ts';

/** The skills shipped with Steward (`skills/` in the package). */
export const BUILTIN_SKILLS_DIR = fileURLToPath(new URL('../../skills/', import.meta.url));

/** The domains shipped in `skills/`: an MCP server may not take one of these names. */
export function builtinSkillDomains(dir = BUILTIN_SKILLS_DIR): Set<string> {
  try {
    return new Set(
      readdirSync(dir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
        .map((entry) => entry.name),
    );
  } catch {
    return new Set();
  }
}

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
/** Env and header names whose values are credentials: redacted from logs. */
const SECRET_NAME = /(key|token|secret|password|passwd|auth|credential|cookie|session)/i;

/**
 * Checks `mcp_servers` against the built-in domains and expands `${VAR}` references in env and
 * header values from Steward's environment. Throws ConfigError naming the entry. Returns the
 * servers and the credential values among them (for log redaction).
 */
export function resolveMcpServers(
  servers: readonly McpServerConfig[],
  env: Record<string, string | undefined>,
  builtin: ReadonlySet<string> = builtinSkillDomains(),
): { servers: McpServerConfig[]; secrets: string[] } {
  const secrets: string[] = [];
  const resolved = servers.map((server, index) => {
    if (builtin.has(server.name)) {
      throw new ConfigError(
        `mcp_servers.${index}.name`,
        `"${server.name}" is a built-in skill domain; give this MCP server another name`,
      );
    }
    const expand = (values: Record<string, string> | undefined, field: 'env' | 'headers') => {
      if (!values) return undefined;
      const out: Record<string, string> = {};
      for (const [name, raw] of Object.entries(values)) {
        out[name] = raw.replace(REFERENCE, (_match, variable: string) => {
          const value = env[variable];
          if (value === undefined || value === '') {
            throw new ConfigError(
              `mcp_servers.${index}.${field}.${name}`,
              `refers to \${${variable}}, which is not set in the environment; export ${variable} or remove the reference`,
            );
          }
          return value;
        });
        if (SECRET_NAME.test(name) && out[name]!.length > 0) secrets.push(out[name]!);
      }
      return out;
    };
    return { ...server, env: expand(server.env, 'env'), headers: expand(server.headers, 'headers') };
  });
  return { servers: resolved.map(dropUndefined), secrets };
}

function dropUndefined(server: McpServerConfig): McpServerConfig {
  return Object.fromEntries(
    Object.entries(server).filter(([, value]) => value !== undefined),
  ) as McpServerConfig;
}

/** True when a header or env name holds a credential (what `security audit` looks for too). */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}
