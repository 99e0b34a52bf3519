import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import { poll } from '../../../../test/support/wait';
import { loadCatalogSettings } from '../config/catalog.settings';
import { FdpIndexClient } from './fdp-index.client';
import {
  FdpIndexScheduler,
  FIRST_PING_MS,
  PING_INTERVAL_MS,
  RETRY_FIRST_MS,
} from './fdp-index.scheduler';

/**
 * A FAIR Data Point index answering pings as FAIRDataTeam/FAIRDataPoint-index does
 * (api/controller/PingController.java, service/EventService.java `acceptIncomingPing`,
 * exceptions/RateLimitException.java, api/controller/ApiExceptionHandler.java): `POST /` with a
 * PingDTO `{"clientUrl": …}`; more than `hits` pings from one address within the window: 429
 * with an ErrorDTO `{code, message}` (no Retry-After); a body it cannot read as a PingDTO: 400
 * "Could not parse PING: …"; otherwise 204. `refuse` makes it read every ping as unparsable (an
 * index whose PingDTO this ping does not fit), the one way our well-formed ping meets a 400.
 */
function fakeIndex(hits: number) {
  const pings: unknown[] = [];
  const state = { refuse: false, window: [] as number[] };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const error = (code: number, message: string) => {
        res.writeHead(code, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ code, message }));
      };
      if (req.method !== 'POST' || req.url !== '/') return error(405, 'Method not allowed');
      if (state.window.length > hits)
        return error(429, `Rate limit reached for ${req.socket.remoteAddress} - PING ignored`);
      state.window.push(Date.now());
      let ping: { clientUrl?: unknown };
      try {
        ping = JSON.parse(body) as { clientUrl?: unknown };
        if (state.refuse || typeof ping.clientUrl !== 'string') throw new Error('no PingDTO');
      } catch (e) {
        return error(400, `Could not parse PING: ${(e as Error).message}`);
      }
      pings.push(ping);
      res.writeHead(204).end();
    });
  });
  return { server, pings, state };
}

describe('FdpIndexScheduler: pings FAIR Data Point indexes at start, weekly, with backoff', () => {
  let index: ReturnType<typeof fakeIndex>;
  let url: string;
  let timers: { run: () => void; ms: number }[];
  let scheduler: FdpIndexScheduler;
  let warn: jest.SpyInstance;
  let error: jest.SpyInstance;

  beforeEach(async () => {
    index = fakeIndex(2);
    await new Promise<void>((resolve) => index.server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(index.server.address() as AddressInfo).port}/`;
    timers = [];
    scheduler = new FdpIndexScheduler(
      loadCatalogSettings({
        DATABASE_URL: 'postgres://catalog@db/catalog',
        CATALOG_SOURCE: 'https://catalog.example.org',
        FDP_INDEX_URL: url,
      }),
      new FdpIndexClient(),
    );
    scheduler.setTimer = (run, ms) => {
      timers.push({ run, ms });
      return () => undefined;
    };
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });
  afterEach(async () => {
    scheduler.onApplicationShutdown();
    jest.restoreAllMocks();
    await new Promise((resolve) => index.server.close(resolve));
  });

  /** Runs the timer set last and waits for the one the ping sets next. */
  async function fire(): Promise<number> {
    const { run } = timers[timers.length - 1];
    const before = timers.length;
    run();
    return (await poll(() => timers[before], 'the next timer')).ms;
  }

  it('pings with {"clientUrl": <root>} soon after start, then a week later', async () => {
    scheduler.start();
    expect(timers.map((t) => t.ms)).toEqual([FIRST_PING_MS]);
    const next = await fire();
    expect(index.pings).toEqual([{ clientUrl: 'https://catalog.example.org/fdp' }]);
    expect(next).toBeGreaterThan(PING_INTERVAL_MS - 60_000);
    expect(next).toBeLessThanOrEqual(PING_INTERVAL_MS);
    await fire();
    expect(index.pings).toHaveLength(2);
  });

  it('logs a 429 and tries again with a doubling backoff until the index takes the ping', async () => {
    scheduler.start();
    await fire();
    await fire();
    await fire();
    // A fourth ping within the window (more than `hits` before it): 429.
    expect(index.state.window).toHaveLength(3);
    expect(await fire()).toBe(RETRY_FIRST_MS);
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ status: 429, reason: expect.stringContaining('Rate limit') }),
      expect.any(String),
    );
    expect(await fire()).toBe(2 * RETRY_FIRST_MS);
    index.state.window = [];
    const afterRetry = await fire();
    expect(index.pings).toHaveLength(4);
    expect(warn).toHaveBeenCalledTimes(2);
    // The next round a week after the round began, not after the retry.
    expect(afterRetry).toBeLessThanOrEqual(PING_INTERVAL_MS);
  });

  it('logs a refused ping (400) and waits for the next week; an index that does not answer is retried', async () => {
    index.state.refuse = true;
    scheduler.start();
    const next = await fire();
    expect(error).toHaveBeenCalledWith(
      expect.objectContaining({
        status: 400,
        reason: expect.stringContaining('Could not parse PING'),
      }),
      expect.any(String),
    );
    expect(next).toBeGreaterThan(PING_INTERVAL_MS - 60_000);
    // Gone: no answer at all.
    await new Promise((resolve) => index.server.close(resolve));
    index.server.listen(0); // closed again in afterEach
    expect(await fire()).toBe(RETRY_FIRST_MS);
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ reason: expect.any(String) }),
      'FAIR Data Point index ping failed; trying again',
    );
  });
});
