import { isIP } from 'node:net';
import { IpAllowList, normalizeIp } from './ip-allow-list';

/**
 * The address of the real client. The socket peer is the truth unless it is one of our own
 * proxies; only then is `X-Forwarded-For` read, right to left, skipping further trusted
 * proxies. Entries left of the first untrusted hop were written by the client and are never
 * believed, so a forged header cannot grant access.
 */
export function resolveClientIp(
  peer: string | undefined,
  forwardedFor: string | string[] | undefined,
  trustedProxies: IpAllowList,
): string | undefined {
  if (peer === undefined) return undefined;
  let current = normalizeIp(peer);
  if (!trustedProxies.allows(current) || forwardedFor === undefined) return current;

  const header = Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor;
  const hops = header
    .split(',')
    .map((hop) => normalizeIp(hop))
    .filter((hop) => hop.length > 0);
  for (let i = hops.length - 1; i >= 0; i--) {
    // A malformed hop means the proxy chain cannot be read: stop at the last address we trust.
    if (isIP(hops[i]) === 0) return current;
    current = hops[i];
    if (!trustedProxies.allows(current)) return current;
  }
  return current;
}
