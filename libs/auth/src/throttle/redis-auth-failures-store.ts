import type { Cluster, Redis } from 'ioredis';
import type { AuthFailureStore, FailureCount, FailurePolicy } from './auth-failure-store';

/**
 * KEYS: the client's failure counter, its block marker. ARGV: max failures, window ms, block ms.
 * One script, so concurrent failures on several replicas are counted exactly. The counter
 * expires with its window and the marker with its block: Redis keeps nothing longer.
 */
const RECORD_FAILURE = `
local failures = redis.call('INCR', KEYS[1])
if failures == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if failures > tonumber(ARGV[1]) then redis.call('SET', KEYS[2], '1', 'PX', ARGV[3]) end
return {failures, redis.call('PTTL', KEYS[2])}
`;

/** Failed authentications per client in Redis, under `<prefix>:auth:`. */
export class RedisAuthFailuresStore implements AuthFailureStore {
  constructor(
    private readonly redis: Redis | Cluster,
    private readonly prefix: string,
  ) {}

  async recordFailure(client: string, policy: FailurePolicy): Promise<FailureCount> {
    const [failures, ttl] = (await this.redis.eval(
      RECORD_FAILURE,
      2,
      `${this.prefix}:auth:failures:${client}`,
      `${this.prefix}:auth:blocked:${client}`,
      policy.maxFailures,
      policy.windowMs,
      policy.blockMs,
    )) as [number, number];
    // PTTL is -2 for no marker (not blocked).
    return { failures, blockedForMs: Math.max(0, ttl) };
  }
}
