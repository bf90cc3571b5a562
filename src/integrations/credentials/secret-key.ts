import { createHash, hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../../errors.ts';

export type SecretKey = {
  /** 32 bytes for AES-256-GCM. */
  key: Buffer;
  /** A short fingerprint stored beside each sealed value, so a changed key is detected. */
  id: string;
  /** Where the key came from, for messages: `STEWARD_SECRET_KEY` or the key file's path. */
  origin: string;
};

export const KEY_FILE = 'secret.key';

/**
 * The credential key: derived from STEWARD_SECRET_KEY when set, else from `<data dir>/secret.key`,
 * generated on first use with mode 0600. A key file others can read is refused (it may have leaked).
 */
export function loadSecretKey(config: { secret_key?: string; dataDir: string }): SecretKey {
  if (config.secret_key) return derive(Buffer.from(config.secret_key, 'utf8'), 'STEWARD_SECRET_KEY');
  const file = path.join(config.dataDir, KEY_FILE);
  let material: Buffer;
  try {
    material = readKeyFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
    try {
      writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
      chmodSync(file, 0o600);
    } catch (writeError) {
      // Another process created it first: use theirs.
      if ((writeError as NodeJS.ErrnoException).code !== 'EEXIST') throw writeError;
    }
    material = readKeyFile(file);
  }
  return derive(material, file);
}

function readKeyFile(file: string): Buffer {
  const stat = statSync(file);
  if ((stat.mode & 0o077) !== 0) {
    throw new ConfigError(
      'STEWARD_SECRET_KEY',
      `the key file ${file} is readable by other users (mode ${(stat.mode & 0o777).toString(8)}): run chmod 600 ${file}, or set STEWARD_SECRET_KEY`,
    );
  }
  const text = readFileSync(file, 'utf8').trim();
  const material = Buffer.from(text, 'base64');
  if (material.length < 32) {
    throw new ConfigError(
      'STEWARD_SECRET_KEY',
      `the key file ${file} is damaged (expected 32 random bytes in base64): restore it from a backup, or move it away and reconnect every account`,
    );
  }
  return material;
}

function derive(material: Buffer, origin: string): SecretKey {
  const key = Buffer.from(hkdfSync('sha256', material, 'steward', 'credentials v1', 32));
  const id = createHash('sha256').update(key).digest('hex').slice(0, 12);
  return { key, id, origin };
}
