import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';
import { CliExit, EXIT_USAGE } from './common.ts';

/** Writes `text` to `file` through a private temporary file and a rename: never half a file. */
function writeAtomically(file: string, text: string, mode: number): void {
  const temporary = `${file}.onboard-${process.pid}`;
  writeFileSync(temporary, text, { mode, flag: 'w' });
  chmodSync(temporary, mode);
  renameSync(temporary, file);
}

function readOr(file: string, fallback: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}

const quoted = (value: string) =>
  /^[A-Za-z0-9_./:@+=,-]*$/.test(value)
    ? value
    : `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;

/**
 * Sets `values` in `<dir>/.env` (mode 0600), keeping every other line. Lines of `superseded`
 * variables (settings onboarding now writes to steward.yaml, which they would override) are
 * commented out, not deleted.
 */
export function writeEnvFile(
  dir: string,
  values: Record<string, string>,
  superseded: readonly string[] = [],
): string {
  const file = path.join(dir, '.env');
  const lines = readOr(
    file,
    '# Steward secrets, written by steward onboard. Keep this file private (chmod 600).\n',
  )
    .replace(/\n$/, '')
    .split('\n');
  const pending = new Map(Object.entries(values));
  const out = lines.map((line) => {
    const name = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line)?.[1];
    if (!name) return line;
    if (pending.has(name)) {
      const value = pending.get(name)!;
      pending.delete(name);
      return `${name}=${quoted(value)}`;
    }
    if (superseded.includes(name)) return `# ${line}  # set in steward.yaml by steward onboard`;
    return line;
  });
  for (const [name, value] of pending) out.push(`${name}=${quoted(value)}`);
  writeAtomically(file, `${out.join('\n')}\n`, 0o600);
  return file;
}

/** Sets each dotted key of `settings` in the YAML file, keeping its comments and other keys. */
export function writeYamlSettings(file: string, settings: Array<[string[], string]>): string {
  const existing = readOr(file, '');
  const document = parseDocument(
    existing || '# Steward settings, written by steward onboard. Secrets live in .env, not here.\n',
  );
  if (document.errors.length > 0)
    throw new CliExit(
      EXIT_USAGE,
      `steward onboard: ${file} is not valid YAML (${document.errors[0]!.message.split('\n')[0]}); fix it or move it away, then run onboard again. Nothing was written.`,
    );
  for (const [keys, value] of settings) document.setIn(keys, value);
  writeAtomically(file, document.toString(), 0o644);
  return file;
}

export const SERVICE_KINDS = ['systemd', 'launchd', 'none'] as const;
export type ServiceKind = (typeof SERVICE_KINDS)[number];

const STEWARD_BIN = fileURLToPath(new URL('../../bin/steward.js', import.meta.url));
const NODE_FLAGS = [
  '--liftoff-only',
  '--max-semi-space-size=1',
  '--heap-growing-percent=20',
  '--no-maglev',
  '--no-sparkplug',
];

/**
 * Writes a per-user service that runs `steward start` in `workingDir` with this Node, where the
 * system looks for it: a systemd user unit or a launchd agent. Returns the file and how to turn it on.
 */
export function writeService(
  kind: Exclude<ServiceKind, 'none'>,
  workingDir: string,
  env: NodeJS.ProcessEnv = process.env,
): { file: string; enable: string } {
  const home = env.HOME ?? os.homedir();
  const command = [process.execPath, ...NODE_FLAGS, STEWARD_BIN, 'start'];
  if (kind === 'systemd') {
    const dir = path.join(env.XDG_CONFIG_HOME ?? path.join(home, '.config'), 'systemd', 'user');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'steward.service');
    const quote = (word: string) => (/[\s"\\]/.test(word) ? `"${word.replaceAll('"', '\\"')}"` : word);
    writeAtomically(
      file,
      [
        '[Unit]',
        'Description=Steward, a personal assistant',
        'After=network-online.target',
        '',
        '[Service]',
        `WorkingDirectory=${workingDir}`,
        `ExecStart=${command.map(quote).join(' ')}`,
        'Restart=on-failure',
        'RestartSec=5',
        '',
        '[Install]',
        'WantedBy=default.target',
        '',
      ].join('\n'),
      0o644,
    );
    return {
      file,
      enable:
        'systemctl --user daemon-reload && systemctl --user enable --now steward (and loginctl enable-linger $USER to run it while you are logged out)',
    };
  }
  const dir = path.join(home, 'Library', 'LaunchAgents');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'dev.steward.agent.plist');
  const xml = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
  const logs = path.join(workingDir, 'steward-launchd.log');
  writeAtomically(
    file,
    [
      '<?xml version="1.0" encoding="UTF-8"?>',
      '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
      '<plist version="1.0">',
      '<dict>',
      '  <key>Label</key><string>dev.steward.agent</string>',
      '  <key>ProgramArguments</key>',
      '  <array>',
      ...command.map((word) => `    <string>${xml(word)}</string>`),
      '  </array>',
      `  <key>WorkingDirectory</key><string>${xml(workingDir)}</string>`,
      '  <key>RunAtLoad</key><true/>',
      '  <key>KeepAlive</key><true/>',
      `  <key>StandardOutPath</key><string>${xml(logs)}</string>`,
      `  <key>StandardErrorPath</key><string>${xml(logs)}</string>`,
      '</dict>',
      '</plist>',
      '',
    ].join('\n'),
    0o644,
  );
  return { file, enable: `launchctl load -w ${file}` };
}
