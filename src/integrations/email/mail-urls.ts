/** Connection settings read from `imap(s)://user:pass@host:port` and `smtp(s)://…` URLs. */
export type MailServer = {
  host: string;
  port: number;
  /** TLS from the first byte (imaps://, smtps://). */
  secure: boolean;
  /** Upgrade a plain connection with STARTTLS: only when the URL asks (`?starttls=true`). */
  starttls: boolean;
  user: string;
  password: string;
};

/** Parses a mail server URL; null when it is not one of `schemes`. */
export function parseMailUrl(
  url: string,
  schemes: { plain: string; tls: string; plainPort: number; tlsPort: number },
): MailServer | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const scheme = parsed.protocol.replace(/:$/, '');
  if (scheme !== schemes.plain && scheme !== schemes.tls) return null;
  if (!parsed.hostname) return null;
  const secure = scheme === schemes.tls;
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: parsed.port ? Number(parsed.port) : secure ? schemes.tlsPort : schemes.plainPort,
    secure,
    starttls: !secure && ['true', 'required', '1'].includes(parsed.searchParams.get('starttls') ?? ''),
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
  };
}

export const IMAP_SCHEMES = { plain: 'imap', tls: 'imaps', plainPort: 143, tlsPort: 993 };
export const SMTP_SCHEMES = { plain: 'smtp', tls: 'smtps', plainPort: 25, tlsPort: 465 };
