import { IpAllowList, normalizeIp } from './ip-allow-list';

describe('normalizeIp', () => {
  it('unwraps IPv4-mapped IPv6, brackets, ports in brackets and zone ids', () => {
    expect(normalizeIp('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(normalizeIp('::FFFF:192.0.2.7')).toBe('192.0.2.7');
    expect(normalizeIp('[2001:db8::1]')).toBe('2001:db8::1');
    expect(normalizeIp('[2001:db8::1]:8443')).toBe('2001:db8::1');
    expect(normalizeIp('fe80::1%eth0')).toBe('fe80::1');
    expect(normalizeIp('  192.0.2.7 ')).toBe('192.0.2.7');
  });

  it('leaves other text alone for the caller to reject', () => {
    expect(normalizeIp('not-an-ip')).toBe('not-an-ip');
    expect(normalizeIp('192.0.2.7:80')).toBe('192.0.2.7:80');
  });
});

describe('IpAllowList', () => {
  it('matches single IPv4 addresses exactly', () => {
    const list = IpAllowList.parse('192.0.2.7, 198.51.100.1');
    expect(list.allows('192.0.2.7')).toBe(true);
    expect(list.allows('198.51.100.1')).toBe(true);
    expect(list.allows('192.0.2.8')).toBe(false);
  });

  it('matches IPv4 CIDR ranges, bounds included', () => {
    const list = IpAllowList.parse('10.0.0.0/8,192.0.2.0/24');
    expect(list.allows('10.0.0.0')).toBe(true);
    expect(list.allows('10.255.255.255')).toBe(true);
    expect(list.allows('11.0.0.0')).toBe(false);
    expect(list.allows('192.0.2.200')).toBe(true);
    expect(list.allows('192.0.3.1')).toBe(false);
  });

  it('matches IPv6 addresses and ranges in any spelling', () => {
    const list = IpAllowList.parse('2001:db8::1, 2001:db8:aaaa::/48');
    expect(list.allows('2001:db8::1')).toBe(true);
    expect(list.allows('2001:0db8:0000:0000:0000:0000:0000:0001')).toBe(true);
    expect(list.allows('2001:db8::2')).toBe(false);
    expect(list.allows('2001:db8:aaaa:1::5')).toBe(true);
    expect(list.allows('2001:db8:aaab::5')).toBe(false);
  });

  it('accepts /0, /32 and /128 and refuses /33 and /129', () => {
    expect(IpAllowList.parse('0.0.0.0/0').allows('203.0.113.9')).toBe(true);
    expect(IpAllowList.parse('192.0.2.7/32').allows('192.0.2.7')).toBe(true);
    expect(IpAllowList.parse('2001:db8::1/128').allows('2001:db8::1')).toBe(true);
    expect(() => IpAllowList.parse('10.0.0.0/33')).toThrow(
      'not an IP address or CIDR range: 10.0.0.0/33',
    );
    expect(() => IpAllowList.parse('2001:db8::/129')).toThrow('2001:db8::/129');
  });

  it('matches IPv4 clients seen as IPv4-mapped IPv6 by a dual-stack socket', () => {
    const list = IpAllowList.parse('10.0.0.0/8');
    expect(list.allows('::ffff:10.1.2.3')).toBe(true);
    expect(list.allows('::ffff:11.1.2.3')).toBe(false);
  });

  it('accepts IPv4-mapped, bracketed and zoned entries', () => {
    const list = IpAllowList.parse('::ffff:192.0.2.7, [2001:db8::9], fe80::1%eth0');
    expect(list.allows('192.0.2.7')).toBe(true);
    expect(list.allows('2001:db8::9')).toBe(true);
    expect(list.allows('fe80::1')).toBe(true);
    expect(list.allows('fe80::1%lo')).toBe(true);
    expect(list.allows('[2001:db8::9]')).toBe(true);
  });

  it("'*' allows every valid address, but still no malformed one", () => {
    const list = IpAllowList.parse('*');
    expect(list.anyAddress).toBe(true);
    expect(list.allows('203.0.113.9')).toBe(true);
    expect(list.allows('2001:db8::1')).toBe(true);
    expect(list.allows('garbage')).toBe(false);
    expect(list.allows(undefined)).toBe(false);
  });

  it('lists every invalid entry in one error', () => {
    expect(() =>
      IpAllowList.parse('192.0.2.7, nope, 10.0.0.0/33, 10.0.0.0/8/8, 10.0.0.0/x, 999.1.1.1'),
    ).toThrow(
      'not an IP address or CIDR range: nope, 10.0.0.0/33, 10.0.0.0/8/8, 10.0.0.0/x, 999.1.1.1',
    );
  });

  it('refuses a host name and a prefix that is not a plain number', () => {
    expect(() => IpAllowList.parse('localhost')).toThrow('localhost');
    expect(() => IpAllowList.parse('10.0.0.0/-1')).toThrow('10.0.0.0/-1');
    expect(() => IpAllowList.parse('10.0.0.0/1000')).toThrow('10.0.0.0/1000');
  });

  it('skips blank entries and keeps the entries it parsed', () => {
    const list = IpAllowList.parse(' 192.0.2.7 ,, 10.0.0.0/8 , ');
    expect(list.entries).toEqual(['192.0.2.7', '10.0.0.0/8']);
    expect(list.anyAddress).toBe(false);
  });

  it('the empty list allows nothing', () => {
    expect(IpAllowList.parse('').allows('127.0.0.1')).toBe(false);
    expect(IpAllowList.EMPTY.allows('127.0.0.1')).toBe(false);
    expect(IpAllowList.EMPTY.entries).toEqual([]);
  });

  it('allows(undefined) and malformed addresses are false', () => {
    const list = IpAllowList.parse('0.0.0.0/0, ::/0');
    expect(list.allows(undefined)).toBe(false);
    expect(list.allows('')).toBe(false);
    expect(list.allows('1.2.3')).toBe(false);
    expect(list.allows('192.0.2.7:8080')).toBe(false);
  });

  it('keeps the families apart: an IPv4 range does not match IPv6 and vice versa', () => {
    expect(IpAllowList.parse('0.0.0.0/0').allows('2001:db8::1')).toBe(false);
    expect(IpAllowList.parse('2001:db8::/32').allows('192.0.2.7')).toBe(false);
  });
});
