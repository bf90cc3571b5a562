import { BlockList, isIP, isIPv4 } from 'node:net';

/*
 * Address ranges a URL from the model must not reach: loopback, private, link-local (cloud
 * metadata lives at 169.254.169.254), carrier-grade NAT, multicast, reserved and documentation
 * ranges. IPv6 forms that embed an IPv4 address (::ffff:a.b.c.d, NAT64, 6to4) are judged by the
 * address they embed, so `[::ffff:127.0.0.1]` is loopback like `127.0.0.1`.
 */

const V4: Array<[string, number, string]> = [
  ['0.0.0.0', 8, 'this-network'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared (carrier-grade NAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];
const V6: Array<[string, number, string]> = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['100::', 64, 'discard'],
  ['2001::', 32, 'teredo'],
  ['2001:db8::', 32, 'documentation'],
  ['fc00::', 7, 'unique-local (private)'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
];

const ranges = [
  ...V4.map((range) => [range, 'ipv4'] as const),
  ...V6.map((range) => [range, 'ipv6'] as const),
].map(([[network, prefix, name], family]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { list, family, name };
});

/** The kind of non-public range `address` is in (`loopback`, `private`, …), or null for a public address. */
export function addressRange(address: string): string | null {
  const ip = address.replace(/^\[|\]$/g, '').split('%')[0]!;
  const family = isIP(ip);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const embedded = embeddedIpv4(ip);
    if (embedded) return addressRange(embedded);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return ranges.find((range) => range.family === type && range.list.check(ip, type))?.name ?? null;
}

/** `address` falls inside one of `allow`'s IP or CIDR entries (host names are matched elsewhere). */
export function allowedAddress(address: string, allow: readonly string[]): boolean {
  const ip = address.replace(/^\[|\]$/g, '').split('%')[0]!;
  const candidates = [ip, embeddedIpv4(ip)].filter((value): value is string => Boolean(value));
  for (const entry of allow) {
    const [network, bits] = entry
      .trim()
      .replace(/^\[|\]$/g, '')
      .split('/');
    const family = isIP(network ?? '');
    if (family === 0) continue;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    const prefix = bits === undefined ? (family === 4 ? 32 : 128) : Number(bits);
    if (!Number.isInteger(prefix)) continue;
    const list = new BlockList();
    list.addSubnet(network!, prefix, type);
    if (candidates.some((candidate) => isIP(candidate) === family && list.check(candidate, type)))
      return true;
  }
  return false;
}

/** True when `address` is in a non-public range that `allow` does not open. */
export function isBlockedAddress(address: string, allow: readonly string[] = []): boolean {
  return addressRange(address) !== null && !allowedAddress(address, allow);
}

/** The IPv4 address inside an IPv4-mapped, IPv4-compatible, NAT64 or 6to4 IPv6 address. */
function embeddedIpv4(ip: string): string | null {
  const groups = expandIpv6(ip);
  if (!groups) return null;
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  const zeros = (count: number) => groups.slice(0, count).every((group) => group === 0);
  if (zeros(5) && groups[5] === 0xffff) return v4(groups[6]!, groups[7]!);
  if (zeros(6) && (groups[6] !== 0 || groups[7]! > 1)) return v4(groups[6]!, groups[7]!);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0))
    return v4(groups[6]!, groups[7]!);
  if (groups[0] === 0x2002) return v4(groups[1]!, groups[2]!);
  return null;
}

function expandIpv6(ip: string): number[] | null {
  if (isIP(ip) !== 6) return null;
  let text = ip.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted && isIPv4(dotted[1]!)) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -dotted[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const missing = 8 - left.length - right.length;
  const parts = tail === undefined ? left : [...left, ...Array<string>(missing).fill('0'), ...right];
  return parts.length === 8 ? parts.map((part) => Number.parseInt(part || '0', 16)) : null;
}
