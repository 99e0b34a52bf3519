import type { IncomingMessage } from 'node:http';
import { RateLimitedError, UnauthorizedError } from '@app/errors';
import { IpAllowList } from '../ip-allow-list';
import { AuthFailureLimiter, AuthThrottleOptions } from './auth-failure-limiter';
import type { AuthFailureStore, FailureCount, FailurePolicy } from './auth-failure-store';
import { throttleKeyOf } from './throttle-key';

/**
 * The store's contract in memory, to test the limiter's own logic; the PostgreSQL and Redis
 * stores are exercised against the real servers in the front-door e2e specs of both apps.
 */
class CountingStore implements AuthFailureStore {
  calls: string[] = [];
  private readonly failures = new Map<string, number>();
  constructor(private readonly now: () => number) {}
  private readonly blockedUntil = new Map<string, number>();

  recordFailure(client: string, policy: FailurePolicy): Promise<FailureCount> {
    this.calls.push(client);
    const failures = (this.failures.get(client) ?? 0) + 1;
    this.failures.set(client, failures);
    if (failures > policy.maxFailures) this.blockedUntil.set(client, this.now() + policy.blockMs);
    const left = (this.blockedUntil.get(client) ?? 0) - this.now();
    return Promise.resolve({ failures, blockedForMs: Math.max(0, left) });
  }
}

function requestFrom(peer: string, forwardedFor?: string): IncomingMessage {
  const headers = forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor };
  return { socket: { remoteAddress: peer }, headers } as unknown as IncomingMessage;
}

const OPTIONS: AuthThrottleOptions = {
  maxFailures: 3,
  windowMs: 60_000,
  blockMs: 30_000,
  trustedProxies: IpAllowList.parse('10.0.0.1'),
};
const wrong = () => Promise.resolve(null);
const right = () => Promise.resolve('principal');

async function refusedWith(attempt: Promise<unknown>): Promise<RateLimitedError> {
  const error = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RateLimitedError);
  return error as RateLimitedError;
}

describe('AuthFailureLimiter', () => {
  let now: number;
  let store: CountingStore;
  let limiter: AuthFailureLimiter;

  beforeEach(() => {
    now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    store = new CountingStore(() => now);
    limiter = new AuthFailureLimiter(store, OPTIONS);
  });
  afterEach(() => jest.restoreAllMocks());

  it('never touches the store for a caller whose credentials resolve', async () => {
    for (let i = 0; i < 100; i++) {
      await expect(limiter.attempt(requestFrom('192.0.2.1'), right)).resolves.toBe('principal');
    }
    expect(store.calls).toEqual([]);
  });

  it('counts failures and answers the one past the limit with 429 and Retry-After', async () => {
    const client = requestFrom('192.0.2.1');
    for (let i = 0; i < 3; i++) await expect(limiter.attempt(client, wrong)).resolves.toBeNull();
    const error = await refusedWith(limiter.attempt(client, wrong));
    expect(error.status).toBe(429);
    expect(error.headers).toEqual({ 'Retry-After': '30' });
    expect(error.toEnvelope()).toEqual({
      status: 'Error',
      description: 'Too many failed authentications from this address; retry later',
      more: {},
    });
    expect(store.calls).toHaveLength(4);
  });

  it("lets a blocked client's valid credentials in, and refuses its failures from memory", async () => {
    const client = requestFrom('192.0.2.1');
    for (let i = 0; i < 4; i++) await limiter.attempt(client, wrong).catch(() => undefined);
    now += 10_000;
    // Behind one NAT, proxy or worker host: the right key is never refused for others' guesses.
    for (let i = 0; i < 50; i++) {
      await expect(limiter.attempt(client, right)).resolves.toBe('principal');
      const error = await refusedWith(limiter.attempt(client, wrong));
      expect(error.headers['Retry-After']).toBe('20');
    }
    // The 50 failures during the block were answered without the store.
    expect(store.calls).toHaveLength(4);
    expect(limiter.refusal(client)).toBeInstanceOf(RateLimitedError);
  });

  it("answers a blocked client's refused token with 429, without the store", async () => {
    const client = requestFrom('192.0.2.1');
    for (let i = 0; i < 4; i++) await limiter.attempt(client, wrong).catch(() => undefined);
    const refuseToken = () => Promise.reject(new UnauthorizedError('Invalid access token'));
    await refusedWith(limiter.attempt(client, refuseToken));
    expect(store.calls).toHaveLength(4);
  });

  it('lets the client in again once the block is over', async () => {
    const client = requestFrom('192.0.2.1');
    for (let i = 0; i < 4; i++) await limiter.attempt(client, wrong).catch(() => undefined);
    now += 30_000;
    expect(limiter.refusal(client)).toBeUndefined();
    await expect(limiter.attempt(client, right)).resolves.toBe('principal');
  });

  it('counts a 401 thrown by the resolver (refused tokens) and passes it on', async () => {
    const client = requestFrom('192.0.2.1');
    const refuseToken = () =>
      Promise.reject(new UnauthorizedError('Invalid or expired access token'));
    for (let i = 0; i < 3; i++) {
      await expect(limiter.attempt(client, refuseToken)).rejects.toBeInstanceOf(UnauthorizedError);
    }
    await refusedWith(limiter.attempt(client, refuseToken));
  });

  it('does not count other errors (a dependency down is not a guess)', async () => {
    const down = () => Promise.reject(new Error('identity provider unavailable'));
    await expect(limiter.attempt(requestFrom('192.0.2.1'), down)).rejects.toThrow('unavailable');
    expect(store.calls).toEqual([]);
  });

  it('keeps clients apart, by the address the trusted proxy saw', async () => {
    const guesser = requestFrom('10.0.0.1', '198.51.100.7');
    for (let i = 0; i < 4; i++) await limiter.attempt(guesser, wrong).catch(() => undefined);
    await refusedWith(limiter.attempt(guesser, wrong));
    await expect(limiter.attempt(requestFrom('10.0.0.1', '198.51.100.8'), wrong)).resolves.toBe(
      null,
    );
    // An untrusted peer's X-Forwarded-For is its own writing: it is counted by its socket.
    expect(store.calls).toEqual([...Array<string>(4).fill('198.51.100.7'), '198.51.100.8']);
    await limiter.attempt(requestFrom('192.0.2.9', '198.51.100.7'), wrong);
    expect(store.calls.at(-1)).toBe('192.0.2.9');
  });

  it('counts an IPv6 network of /64 as one client', async () => {
    for (let i = 1; i <= 4; i++) {
      await limiter
        .attempt(requestFrom(`2001:db8:1:2::${i.toString(16)}`), wrong)
        .catch(() => undefined);
    }
    await refusedWith(limiter.attempt(requestFrom('2001:db8:1:2:ffff::1'), wrong));
    await expect(limiter.attempt(requestFrom('2001:db8:1:3::1'), wrong)).resolves.toBeNull();
  });

  it('remembers at most maxBlockedClients, whatever a flood of addresses does', async () => {
    // A store that blocks at the first failure: every address of the flood ends up blocked.
    const blocking = new AuthFailureLimiter(
      { recordFailure: () => Promise.resolve({ failures: 1, blockedForMs: 60_000 }) },
      { ...OPTIONS, maxBlockedClients: 100 },
    );
    for (let i = 0; i < 5000; i++) {
      const ip = `198.18.${i >> 8}.${i & 255}`;
      await blocking.attempt(requestFrom(ip), wrong).catch(() => undefined);
    }
    expect(blocking.blockedClients).toBe(100);
    // The newest are the ones remembered.
    expect(blocking.refusal(requestFrom('198.18.19.135'))).toBeInstanceOf(RateLimitedError);
    expect(blocking.refusal(requestFrom('198.18.0.0'))).toBeUndefined();
  });

  it('still answers 401 when the store cannot count', async () => {
    const broken = new AuthFailureLimiter(
      { recordFailure: () => Promise.reject(new Error('connection refused')) },
      OPTIONS,
    );
    for (let i = 0; i < 10; i++) {
      await expect(broken.attempt(requestFrom('192.0.2.1'), wrong)).resolves.toBeNull();
    }
  });

  it('does nothing when turned off (AUTH_FAILURE_LIMIT=0) or without a store', async () => {
    const off = new AuthFailureLimiter(store, { ...OPTIONS, maxFailures: 0 });
    for (let i = 0; i < 10; i++) await off.attempt(requestFrom('192.0.2.1'), wrong);
    expect(store.calls).toEqual([]);
    await expect(
      AuthFailureLimiter.disabled().attempt(requestFrom('192.0.2.1'), wrong),
    ).resolves.toBeNull();
  });
});

describe('throttleKeyOf', () => {
  it('keeps an IPv4 address and counts IPv6 by its /64, however it is written', () => {
    expect(throttleKeyOf('192.0.2.1')).toBe('192.0.2.1');
    expect(throttleKeyOf('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(throttleKeyOf('2001:0DB8:0001:0002:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(throttleKeyOf('::1')).toBe('0:0:0:0::/64');
    expect(throttleKeyOf('2001:db8::')).toBe('2001:db8:0:0::/64');
    expect(throttleKeyOf('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
    expect(throttleKeyOf('fe80:1:2:3:4:5:1.2.3.4')).toBe('fe80:1:2:3::/64');
  });

  it('puts requests without a readable address together', () => {
    expect(throttleKeyOf(undefined)).toBe('unknown');
    expect(throttleKeyOf('garbage')).toBe('unknown');
  });
});
