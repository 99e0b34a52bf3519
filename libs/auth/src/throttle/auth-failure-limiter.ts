import { Logger } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { RateLimitedError, UnauthorizedError } from '@app/errors';
import { resolveClientIp } from '../client-ip';
import { IpAllowList } from '../ip-allow-list';
import type { AuthFailureStore, FailurePolicy } from './auth-failure-store';
import { throttleKeyOf } from './throttle-key';

export interface AuthThrottleOptions extends FailurePolicy {
  /** Whose `X-Forwarded-For` is believed when telling clients apart (the TRUSTED_PROXIES rule). */
  trustedProxies: IpAllowList;
  /** Blocked clients this process remembers; past it the oldest is forgotten first. */
  maxBlockedClients?: number;
}

/** About 100 bytes each: a flood of blocked addresses costs this process at most ~1 MB. */
const DEFAULT_MAX_BLOCKED_CLIENTS = 10_000;
const REFUSED = 'Too many failed authentications from this address; retry later';

/**
 * Throttles guessing of keys and tokens per client address, without ever refusing a valid
 * credential. The presented credential is always resolved first (in constant time against the
 * configured keys, by its hash against stored ones); a valid one passes whatever others sent
 * from the same address, so a NAT, a proxy or the worker's own registrations cannot be locked
 * out by a guesser beside them. Only failures are throttled: they are counted in a store every
 * replica shares, and a client past `maxFailures` in `windowMs` has every further failure
 * answered with 429 for `blockMs`, from this process's memory, without asking the store.
 *
 * Guessing stays infeasible through the keys' entropy (docs/security.md): the throttle keeps
 * a guesser's cost to the store bounded and makes it visible (a warning per blocked client).
 * Successes are never recorded and cost nothing here. A replica learns that a client is
 * blocked from the store's answer to that client's next failure there.
 */
export class AuthFailureLimiter {
  private readonly logger = new Logger('AuthFailureLimiter');
  /** Client → end of its block (epoch ms). Map order is insertion order: the first is the oldest. */
  private readonly blocked = new Map<string, number>();
  private readonly maxBlocked: number;

  constructor(
    private readonly store: AuthFailureStore | undefined,
    private readonly options: AuthThrottleOptions,
  ) {
    this.maxBlocked = options.maxBlockedClients ?? DEFAULT_MAX_BLOCKED_CLIENTS;
  }

  /** No throttling at all (processes without protected routes, or `AUTH_FAILURE_LIMIT=0`). */
  static disabled(): AuthFailureLimiter {
    return new AuthFailureLimiter(undefined, {
      maxFailures: 0,
      windowMs: 0,
      blockMs: 0,
      trustedProxies: IpAllowList.EMPTY,
    });
  }

  get enabled(): boolean {
    return this.store !== undefined && this.options.maxFailures > 0;
  }

  /** How many blocked clients this process remembers (bounded by `maxBlockedClients`). */
  get blockedClients(): number {
    return this.blocked.size;
  }

  /**
   * The 429 for a client this process knows to be blocked, else undefined. Memory only. Given
   * only for a failure: a blocked client's valid credentials still pass.
   */
  refusal(req: IncomingMessage): RateLimitedError | undefined {
    if (this.blocked.size === 0) return undefined;
    const client = this.clientOf(req);
    const until = this.blocked.get(client);
    if (until === undefined) return undefined;
    const left = until - Date.now();
    if (left > 0) return refused(left);
    this.blocked.delete(client);
    return undefined;
  }

  /**
   * Authenticates through `resolve` under the throttle: a success passes untouched; a failure
   * (null, or a 401 thrown by `resolve`) of a client known to be blocked is answered with 429
   * at once, any other is counted, and the one that crosses the limit gets 429 instead of 401.
   */
  async attempt<T>(req: IncomingMessage, resolve: () => Promise<T | null>): Promise<T | null> {
    if (!this.enabled) return resolve();
    let result: T | null;
    try {
      result = await resolve();
    } catch (error) {
      if (error instanceof UnauthorizedError) await this.failed(req);
      throw error;
    }
    if (result === null) await this.failed(req);
    return result;
  }

  private async failed(req: IncomingMessage): Promise<void> {
    // A blocked client's failures cost one map lookup: the store is not asked again.
    const known = this.refusal(req);
    if (known) throw known;
    const client = this.clientOf(req);
    let blockedForMs: number;
    let failures: number;
    try {
      ({ blockedForMs, failures } = await this.store!.recordFailure(client, this.options));
    } catch (error) {
      // Counting is a defence, not a dependency: the caller still gets its 401.
      this.logger.warn(
        { err: error, client },
        'failed authentication not counted: store unavailable',
      );
      return;
    }
    if (blockedForMs <= 0) return;
    if (!this.blocked.has(client)) {
      this.logger.warn(
        { client, failures, blocked_ms: blockedForMs },
        'client blocked after failed authentications',
      );
    }
    this.remember(client, Date.now() + blockedForMs);
    throw refused(blockedForMs);
  }

  private remember(client: string, until: number): void {
    this.blocked.delete(client);
    if (this.blocked.size >= this.maxBlocked) {
      const oldest = this.blocked.keys().next().value;
      if (oldest !== undefined) this.blocked.delete(oldest);
    }
    this.blocked.set(client, until);
  }

  private clientOf(req: IncomingMessage): string {
    const ip = resolveClientIp(
      req.socket?.remoteAddress,
      req.headers['x-forwarded-for'],
      this.options.trustedProxies,
    );
    return throttleKeyOf(ip);
  }
}

function refused(blockedForMs: number): RateLimitedError {
  return new RateLimitedError(Math.max(1, Math.ceil(blockedForMs / 1000)), REFUSED);
}
