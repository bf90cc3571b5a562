// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is the steward.yaml syntax under test
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { loadConfig } from './load.ts';
import { builtinSkillDomains } from './mcp-servers.ts';

function load(yaml: string, env: Record<string, string> = {}) {
  const cwd = mkdtempSync(path.join(os.tmpdir(), 'steward-mcp-config-'));
  writeFileSync(path.join(cwd, 'steward.yaml'), yaml);
  return loadConfig({ env, cwd });
}

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('mcp_servers', () => {
  it('reads stdio and Streamable HTTP entries, expanding ${VAR} from the environment', () => {
    const config = load(
      [
        'mcp_servers:',
        '  - { name: notes, command: notes-mcp, args: ["--dir", "/tmp"], env: { NOTES_TOKEN: "${NOTES_TOKEN}", MODE: fast } }',
        '  - { name: wiki, url: "https://wiki.example/mcp", headers: { Authorization: "Bearer ${WIKI_TOKEN}" } }',
      ].join('\n'),
      { NOTES_TOKEN: 'notes-secret-123', WIKI_TOKEN: 'wiki-secret-456' },
    );
    expect(config.mcp_servers).toEqual([
      {
        name: 'notes',
        command: 'notes-mcp',
        args: ['--dir', '/tmp'],
        env: { NOTES_TOKEN: 'notes-secret-123', MODE: 'fast' },
      },
      { name: 'wiki', url: 'https://wiki.example/mcp', headers: { Authorization: 'Bearer wiki-secret-456' } },
    ]);
    // Credentials are redacted from logs; plain settings are not.
    expect(config.secrets).toEqual(expect.arrayContaining(['notes-secret-123', 'Bearer wiki-secret-456']));
    expect(config.secrets).not.toContain('fast');
  });

  it('rejects a name that collides with a built-in domain, naming the entry', () => {
    expect(builtinSkillDomains().has('tasks')).toBe(true);
    const error = configError(() => load('mcp_servers:\n  - { name: tasks, command: x }\n'));
    expect(error.key).toBe('mcp_servers.0.name');
    expect(error.message).toContain('"tasks" is a built-in skill domain');
  });

  it('rejects malformed entries with the key and the fix', () => {
    expect(configError(() => load('mcp_servers:\n  - { name: Notes, command: x }\n')).message).toContain(
      'mcp_servers.0.name (steward.yaml): must be a skill domain name',
    );
    expect(
      configError(() => load('mcp_servers:\n  - { name: a, command: x, url: "http://h/mcp" }\n')).message,
    ).toContain('give either command (stdio) or url (Streamable HTTP), not both');
    expect(configError(() => load('mcp_servers:\n  - { name: a }\n')).message).toContain(
      'give either command',
    );
    expect(configError(() => load('mcp_servers:\n  - { name: a, url: "ftp://h" }\n')).message).toContain(
      'must be an http(s) URL',
    );
    expect(
      configError(() => load('mcp_servers:\n  - { name: a, command: x }\n  - { name: a, command: y }\n'))
        .message,
    ).toContain('"a" is used twice');
    const missing = configError(() =>
      load('mcp_servers:\n  - { name: a, command: x, env: { T: "${NOPE}" } }\n'),
    );
    expect(missing.key).toBe('mcp_servers.0.env.T');
    expect(missing.message).toContain('${NOPE}, which is not set in the environment');
  });

  it('reads security.ssrf_allow from the file or STEWARD_SSRF_ALLOW', () => {
    expect(load('security:\n  ssrf_allow: ["10.0.0.0/8"]\n').security.ssrf_allow).toEqual(['10.0.0.0/8']);
    expect(load('', { STEWARD_SSRF_ALLOW: 'nas.lan, 192.168.1.0/24' }).security.ssrf_allow).toEqual([
      'nas.lan',
      '192.168.1.0/24',
    ]);
  });
});
