import { ProviderError } from '../../errors.ts';

/**
 * Why a handler threw. Circuit breakers count only what the caller cannot fix: `infrastructure`
 * (timeouts, providers, the network) for everyone, `unexpected` exceptions per user (one user's
 * odd input must not disable a skill for all), and never `input` (a value the database refused).
 */
export type FailureKind = 'infrastructure' | 'unexpected' | 'input';

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
]);

export function failureKind(error: unknown): FailureKind {
  if (error instanceof ProviderError) return error.infrastructure ? 'infrastructure' : 'input';
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    // SQLSTATE class 22 (data exception) and 23 (integrity constraint violation): bad values.
    if (/^2[23][0-9A-Z]{3}$/.test(code)) return 'input';
    if (NETWORK_CODES.has(code)) return 'infrastructure';
  }
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause && cause !== error) {
    const inner = failureKind(cause);
    if (inner !== 'unexpected') return inner;
  }
  return 'unexpected';
}

/** Where in `text` an unstorable character sits (NUL, or half of a surrogate pair), or null. */
export function unstorableCharacter(text: string): { index: number; what: string } | null {
  const nul = text.indexOf('\0');
  if (nul >= 0) return { index: nul, what: 'a NUL character (\\0)' };
  if (!text.isWellFormed()) {
    for (let index = 0; index < text.length; index++) {
      const code = text.charCodeAt(index);
      if (code >= 0xd800 && code <= 0xdbff) {
        const next = text.charCodeAt(index + 1);
        if (next >= 0xdc00 && next <= 0xdfff) {
          index++;
          continue;
        }
        return { index, what: 'an unpaired UTF-16 surrogate' };
      }
      if (code >= 0xdc00 && code <= 0xdfff) return { index, what: 'an unpaired UTF-16 surrogate' };
    }
  }
  return null;
}
