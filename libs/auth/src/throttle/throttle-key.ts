import { isIP } from 'node:net';

/** The eight 16-bit groups of a valid IPv6 address, `::` and an IPv4 tail expanded. */
function ipv6Groups(ip: string): number[] {
  const toGroups = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!group.includes('.')) return [parseInt(group, 16)];
          const [a, b, c, d] = group.split('.').map(Number);
          return [a * 256 + b, c * 256 + d];
        });
  const [head, tail] = ip.split('::');
  const left = toGroups(head);
  if (tail === undefined) return left;
  const right = toGroups(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * What failed authentications are counted by: an IPv4 address as it is, an IPv6 address by its
 * /64 network. A /64 is what one subscriber gets, so counting single IPv6 addresses would let a
 * guesser rotate through 2^64 of its own. Expects an address normalised by `normalizeIp`.
 */
export function throttleKeyOf(ip: string | undefined): string {
  if (ip === undefined || isIP(ip) === 0) return 'unknown';
  if (isIP(ip) === 4) return ip;
  const network = ipv6Groups(ip.toLowerCase())
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':');
  return `${network}::/64`;
}
