import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Queryable } from '../../db/index.ts';
import { StewardError } from '../../errors.ts';
import { type CredentialsOf, type Provider, secretsOf } from './credential-types.ts';
import { rememberSecrets } from './known-secrets.ts';
import type { SecretKey } from './secret-key.ts';

/** Stored credentials exist but cannot be read (the key changed, or the row was tampered with). */
export class CredentialsUnreadableError extends StewardError {
  readonly provider: Provider;
  constructor(provider: Provider, userId: string, reason: string) {
    super(
      'credentials_unreadable',
      `The stored ${provider} credentials of user ${userId} cannot be read: ${reason}. Restore the key, or reconnect: steward connect ${provider} --user ${userId}`,
    );
    this.name = 'CredentialsUnreadableError';
    this.provider = provider;
  }
}

export type StoredAccount<P extends Provider = Provider> = {
  provider: P;
  account: string;
  credentials: CredentialsOf[P];
  updatedAt: Date;
};

type AccountRow = { provider: Provider; account: string; key_id: string; sealed: string; updated_at: Date };

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Per-user credentials sealed with AES-256-GCM. The additional data binds each sealed value to
 * its user and provider, so a value copied into another user's row does not decrypt. The key is
 * read lazily: no key file is created until something is stored or read.
 */
export class CredentialStore {
  readonly #db: Queryable;
  readonly #key: () => SecretKey;
  readonly #onChange: (userId: string) => void;

  /** `onChange` hears of every save and removal (caches of who is connected). */
  constructor(db: Queryable, key: () => SecretKey, onChange: (userId: string) => void = () => {}) {
    this.#db = db;
    this.#key = key;
    this.#onChange = onChange;
  }

  async save<P extends Provider>(
    userId: string,
    provider: P,
    account: string,
    credentials: CredentialsOf[P],
  ): Promise<void> {
    const key = this.#key();
    const sealed = seal(key.key, aad(userId, provider), JSON.stringify(credentials));
    rememberSecrets(secretsOf(credentials));
    await this.#db.query(
      `INSERT INTO integration_accounts (user_id, provider, account, key_id, sealed)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (user_id, provider) DO UPDATE SET
         account = EXCLUDED.account, key_id = EXCLUDED.key_id, sealed = EXCLUDED.sealed, updated_at = now()`,
      [userId, provider, account, key.id, sealed],
    );
    this.#onChange(userId);
  }

  /** The user's account of `provider`, or null. Throws CredentialsUnreadableError when it cannot be decrypted. */
  async load<P extends Provider>(userId: string, provider: P): Promise<StoredAccount<P> | null> {
    const rows = await this.#db.query<AccountRow>(
      'SELECT provider, account, key_id, sealed, updated_at FROM integration_accounts WHERE user_id = $1 AND provider = $2',
      [userId, provider],
    );
    const row = rows[0];
    if (!row) return null;
    const key = this.#key();
    if (row.key_id !== key.id) {
      throw new CredentialsUnreadableError(
        provider,
        userId,
        `they were sealed with another key than the current one (${key.origin})`,
      );
    }
    let credentials: CredentialsOf[P];
    try {
      credentials = JSON.parse(open(key.key, aad(userId, provider), row.sealed)) as CredentialsOf[P];
    } catch {
      throw new CredentialsUnreadableError(provider, userId, 'the sealed value fails its integrity check');
    }
    rememberSecrets(secretsOf(credentials));
    return { provider, account: row.account, credentials, updatedAt: new Date(row.updated_at) };
  }

  /** Forgets the account. True when there was one. */
  async remove(userId: string, provider: Provider): Promise<boolean> {
    const rows = await this.#db.query(
      'DELETE FROM integration_accounts WHERE user_id = $1 AND provider = $2 RETURNING provider',
      [userId, provider],
    );
    this.#onChange(userId);
    return rows.length > 0;
  }

  /** The user's connected accounts (no secrets). */
  async list(userId: string): Promise<Array<{ provider: Provider; account: string; updatedAt: Date }>> {
    const rows = await this.#db.query<AccountRow>(
      'SELECT provider, account, updated_at FROM integration_accounts WHERE user_id = $1 ORDER BY provider',
      [userId],
    );
    return rows.map((row) => ({
      provider: row.provider,
      account: row.account,
      updatedAt: new Date(row.updated_at),
    }));
  }
}

function aad(userId: string, provider: Provider): Buffer {
  return Buffer.from(`steward:${userId}:${provider}`, 'utf8');
}

export function seal(key: Buffer, additionalData: Buffer, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(additionalData);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

export function open(key: Buffer, additionalData: Buffer, sealed: string): string {
  const bytes = Buffer.from(sealed, 'base64');
  const iv = bytes.subarray(0, IV_BYTES);
  const tag = bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(additionalData);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
    'utf8',
  );
}
