import { Validate } from 'class-validator';
import { IpAllowList } from '@app/auth';
import type { AuthThrottleOptions } from '@app/auth';
import { DEFAULT_MAX_JSON_DEPTH, DEFAULT_MAX_JSON_OBJECTS } from './json-depth';
import { IntegerSetting, IsIpAllowList } from './settings';
import type { SlowReaderBounds } from './slow-readers';

const DAY_MS = 86_400_000;

/**
 * Settings of the front door that both services share: whose `X-Forwarded-For` is believed,
 * and how failed authentications are throttled. Each app's settings class extends this one.
 */
export class FrontDoorSettings {
  /** Proxies whose X-Forwarded-For hops are believed (addresses or CIDR ranges). */
  @Validate(IsIpAllowList)
  TRUSTED_PROXIES = '';

  /**
   * Failed authentications (wrong keys, refused tokens) allowed per client address (IPv6: per
   * /64) within AUTH_FAILURE_WINDOW_MS; the next one blocks the address. 0 = no throttling.
   */
  @IntegerSetting(0, 1_000_000)
  AUTH_FAILURE_LIMIT = 20;

  @IntegerSetting(1000, DAY_MS)
  AUTH_FAILURE_WINDOW_MS = 60_000;

  /** How long a blocked address gets 429 (with Retry-After) for every further failure. */
  @IntegerSetting(1000, DAY_MS)
  AUTH_FAILURE_BLOCK_MS = 300_000;

  /**
   * Deepest nesting of arrays and objects in a JSON body (import documents included); deeper
   * bodies are refused with 400 before they are parsed.
   */
  @IntegerSetting(8, 1000)
  MAX_JSON_DEPTH = DEFAULT_MAX_JSON_DEPTH;

  /**
   * Most arrays and objects in one JSON body; more are refused with 400 before parsing. Each
   * costs the parser 40-80 bytes however small its text: the default keeps a 32 MiB import of
   * empty records from taking 800 MB, and fits 50,000 dataset records of 13 each.
   */
  @IntegerSetting(1000, 100_000_000)
  MAX_JSON_OBJECTS = DEFAULT_MAX_JSON_OBJECTS;

  /**
   * An answer whose client takes none of it for this long is cut (docs/security.md, slow
   * readers): a reader that stops reading holds its answer's memory and socket no longer. Node
   * checks the socket's progress once a period, so the cut comes within twice this.
   */
  @IntegerSetting(1000, 3_600_000)
  SLOW_READER_TIMEOUT_MS = 30_000;

  /** Answers being sent to one client (address; IPv6: /64) at once; more requests get 429. */
  @IntegerSetting(1, 100_000)
  SLOW_READERS_PER_CLIENT = 8;

  /**
   * Answers being sent at once to all clients; more requests get 503 (health and metrics
   * excepted). Each holds at most a DCAT page's facts, a list the response cache shares, or a
   * download's read buffer (1 MiB) and socket.
   */
  @IntegerSetting(1, 100_000)
  SLOW_READERS_MAX = 32;

  /** The slow-reader bounds of the service's HTTP server (see SlowReaders). */
  get slowReaderBounds(): SlowReaderBounds {
    return {
      stallTimeoutMs: this.SLOW_READER_TIMEOUT_MS,
      perClient: this.SLOW_READERS_PER_CLIENT,
      total: this.SLOW_READERS_MAX,
      trustedProxies: this.trustedProxies,
      exempt: ['/health/live', '/health/ready', '/metrics'],
    };
  }

  get trustedProxies(): IpAllowList {
    return IpAllowList.parse(this.TRUSTED_PROXIES);
  }

  get authThrottle(): AuthThrottleOptions {
    return {
      maxFailures: this.AUTH_FAILURE_LIMIT,
      windowMs: this.AUTH_FAILURE_WINDOW_MS,
      blockMs: this.AUTH_FAILURE_BLOCK_MS,
      trustedProxies: this.trustedProxies,
    };
  }
}
