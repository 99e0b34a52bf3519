import { BlockList, isIP } from 'node:net';

/** Strips what sockets and headers add around an address: IPv4-mapped IPv6, brackets, zone ids. */
export function normalizeIp(raw: string): string {
  let ip = raw.trim();
  if (ip.startsWith('[') && ip.includes(']')) ip = ip.slice(1, ip.indexOf(']'));
  const zone = ip.indexOf('%');
  if (zone >= 0) ip = ip.slice(0, zone);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return mapped ? mapped[1] : ip;
}

/** Addresses whose answer a list keeps (see `allows`). */
const MAX_ANSWERS = 4096;
/** The longest address text kept: an IPv6 address with an IPv4 tail, brackets and a zone. */
const MAX_ADDRESS_LENGTH = 64;

/**
 * A list of addresses and CIDR ranges (IPv4 and IPv6), or `*` for any address. Built on
 * Node's BlockList so the range arithmetic is not ours to get wrong.
 */
export class IpAllowList {
  /** What `allows` answered, by the address as given. */
  private readonly answers = new Map<string, boolean>();

  private constructor(
    private readonly list: BlockList,
    readonly anyAddress: boolean,
    readonly entries: readonly string[],
  ) {}

  static readonly EMPTY = IpAllowList.parse('');

  /** Parses a comma-separated list; throws listing every entry that is not an address or range. */
  static parse(spec: string): IpAllowList {
    const entries = spec
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry.length > 0);
    const list = new BlockList();
    const bad: string[] = [];
    let anyAddress = false;
    for (const entry of entries) {
      if (entry === '*') {
        anyAddress = true;
        continue;
      }
      if (!IpAllowList.add(list, entry)) bad.push(entry);
    }
    if (bad.length > 0) throw new Error(`not an IP address or CIDR range: ${bad.join(', ')}`);
    return new IpAllowList(list, anyAddress, entries);
  }

  private static add(list: BlockList, entry: string): boolean {
    const [address, prefix, extra] = entry.split('/');
    const ip = normalizeIp(address);
    const family = isIP(ip);
    if (family === 0 || extra !== undefined) return false;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) {
      list.addAddress(ip, type);
      return true;
    }
    if (!/^\d{1,3}$/.test(prefix)) return false;
    const bits = Number(prefix);
    if (bits > (family === 4 ? 32 : 128)) return false;
    list.addSubnet(ip, bits, type);
    return true;
  }

  allows(rawIp: string | undefined): boolean {
    // An empty list (no trusted proxy, the default) allows nothing: nothing to parse or look up.
    if (rawIp === undefined || this.entries.length === 0) return false;
    // Asked for every request (the client's address, each hop); the list never changes, so an
    // address's answer is kept. Bounded: emptied when full.
    const known = this.answers.get(rawIp);
    if (known !== undefined) return known;
    const ip = normalizeIp(rawIp);
    const family = isIP(ip);
    const allowed =
      family !== 0 && (this.anyAddress || this.list.check(ip, family === 4 ? 'ipv4' : 'ipv6'));
    // Only what can be an address is kept: a hop of X-Forwarded-For is the client's text.
    if (rawIp.length > MAX_ADDRESS_LENGTH) return allowed;
    if (this.answers.size >= MAX_ANSWERS) this.answers.clear();
    this.answers.set(rawIp, allowed);
    return allowed;
  }
}
