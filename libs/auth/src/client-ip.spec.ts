import { resolveClientIp } from './client-ip';
import { IpAllowList } from './ip-allow-list';

const proxies = IpAllowList.parse('10.0.0.0/8, 2001:db8:ffff::/48');

describe('resolveClientIp', () => {
  it('is undefined without a socket peer', () => {
    expect(resolveClientIp(undefined, '203.0.113.9', proxies)).toBeUndefined();
  });

  it('believes no X-Forwarded-For from an untrusted peer: a forged header changes nothing', () => {
    expect(resolveClientIp('198.51.100.20', '10.1.1.1', proxies)).toBe('198.51.100.20');
    expect(resolveClientIp('198.51.100.20', '127.0.0.1, 10.1.1.1', proxies)).toBe('198.51.100.20');
    expect(resolveClientIp('198.51.100.20', ['10.1.1.1'], IpAllowList.EMPTY)).toBe('198.51.100.20');
  });

  it('normalises the peer address (IPv4-mapped IPv6)', () => {
    expect(resolveClientIp('::ffff:198.51.100.20', undefined, proxies)).toBe('198.51.100.20');
  });

  it('returns a trusted peer itself when it sent no header', () => {
    expect(resolveClientIp('10.0.0.2', undefined, proxies)).toBe('10.0.0.2');
    expect(resolveClientIp('10.0.0.2', '', proxies)).toBe('10.0.0.2');
    expect(resolveClientIp('10.0.0.2', ' , ', proxies)).toBe('10.0.0.2');
  });

  it('from a trusted peer, reads the right-most hop and ignores what the client wrote left of it', () => {
    expect(resolveClientIp('10.0.0.2', '203.0.113.9', proxies)).toBe('203.0.113.9');
    // The client sent "X-Forwarded-For: 10.9.9.9"; our proxy appended the real address.
    expect(resolveClientIp('10.0.0.2', '10.9.9.9, 203.0.113.9', proxies)).toBe('203.0.113.9');
    expect(resolveClientIp('10.0.0.2', '192.0.2.1, 198.51.100.1, 203.0.113.9', proxies)).toBe(
      '203.0.113.9',
    );
  });

  it('walks through a chain of trusted proxies to the first untrusted hop', () => {
    expect(resolveClientIp('10.0.0.2', '192.0.2.1, 203.0.113.9, 10.0.0.4, 10.0.0.3', proxies)).toBe(
      '203.0.113.9',
    );
    expect(
      resolveClientIp('::ffff:10.0.0.2', ['192.0.2.1, 203.0.113.9', '10.0.0.3'], proxies),
    ).toBe('203.0.113.9');
  });

  it('handles IPv6 hops, bracketed or mapped', () => {
    expect(resolveClientIp('2001:db8:ffff::1', '2001:db8:1::5', proxies)).toBe('2001:db8:1::5');
    expect(resolveClientIp('10.0.0.2', '[2001:db8:1::5], ::ffff:10.0.0.7', proxies)).toBe(
      '2001:db8:1::5',
    );
  });

  it('stops at the last trusted address when a hop is malformed', () => {
    expect(resolveClientIp('10.0.0.2', '203.0.113.9, bogus', proxies)).toBe('10.0.0.2');
    expect(resolveClientIp('10.0.0.2', 'bogus, 10.0.0.3', proxies)).toBe('10.0.0.3');
    expect(resolveClientIp('10.0.0.2', '203.0.113.9:5555', proxies)).toBe('10.0.0.2');
  });

  it('returns the left-most hop when every hop is a trusted proxy', () => {
    expect(resolveClientIp('10.0.0.2', '10.0.0.5, 10.0.0.4', proxies)).toBe('10.0.0.5');
  });

  it("with '*' trusted, the left-most address is taken (every hop believed)", () => {
    expect(resolveClientIp('192.0.2.1', '203.0.113.9, 198.51.100.1', IpAllowList.parse('*'))).toBe(
      '203.0.113.9',
    );
  });
});
