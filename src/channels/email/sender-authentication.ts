import type { ParsedMailWithHeaders } from '../../integrations/index.ts';

/** `method=result` entries of an Authentication-Results value, each with its `ptype.property=value` pairs. */
function results(value: string): Array<{ method: string; result: string; props: Record<string, string> }> {
  // The first element is the authserv-id of the server that checked; the results follow, `;`-separated.
  const [, ...entries] = value.replace(/\([^)]*\)/g, ' ').split(';');
  return entries.flatMap((entry) => {
    const tokens = entry.trim().split(/\s+/).filter(Boolean);
    const head = /^([a-z0-9-]+)=([a-z]+)$/i.exec(tokens[0] ?? '');
    if (!head) return [];
    const props: Record<string, string> = {};
    for (const token of tokens.slice(1)) {
      const prop = /^([a-z]+\.[a-z-]+)=(.+)$/i.exec(token);
      if (prop) props[prop[1]!.toLowerCase()] = prop[2]!.replace(/^"|"$/g, '').toLowerCase();
    }
    return [{ method: head[1]!.toLowerCase(), result: head[2]!.toLowerCase(), props }];
  });
}

/** `domain` is `base` or one of its subdomains (relaxed alignment). */
const aligned = (domain: string, base: string | undefined) =>
  Boolean(base) && (domain === base || domain.endsWith(`.${base}`) || base!.endsWith(`.${domain}`));

/**
 * Why the mail's sender is not proven, or null when it is: the topmost `Authentication-Results`
 * (the one the receiving server added; older ones below it may be forged) must show DMARC pass,
 * or a DKIM or SPF pass for a domain aligned with the From address. Without this, anyone could
 * write as an admitted sender by putting their address in From.
 */
export function unauthenticatedReason(mail: ParsedMailWithHeaders): string | null {
  const from = mail.from?.address.toLowerCase() ?? '';
  const domain = from.split('@')[1] ?? '';
  const header = mail.headers['authentication-results'];
  if (!header) return 'no Authentication-Results from the receiving server (DMARC/DKIM/SPF unknown)';
  const found = results(header);
  const passed = found.some(
    ({ method, result, props }) =>
      result === 'pass' &&
      ((method === 'dmarc' && (!props['header.from'] || aligned(domain, props['header.from']))) ||
        (method === 'dkim' && aligned(domain, props['header.d'] ?? props['header.i']?.split('@').at(-1))) ||
        (method === 'spf' && aligned(domain, props['smtp.mailfrom']?.split('@').at(-1)))),
  );
  if (passed) return null;
  const summary = found.map(({ method, result }) => `${method}=${result}`).join(', ') || 'no results';
  return `the sender is not authenticated for ${domain} (${summary})`;
}
