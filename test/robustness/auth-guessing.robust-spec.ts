import type { INestApplication } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthFailureLimiter, hashApiKey } from '@app/auth';
import { createProvisionerApiApp } from '../../apps/provisioner/src/http-app';
import { portOf } from '../support/incomplete-body';
import { CatalogTestApp, startCatalogApp, TEST_GLOBAL_KEY } from '../support/catalog-app';
import {
  provisionerTestSettings,
  queueEnv,
  TEST_READ_KEY,
  TEST_WRITE_KEY,
} from '../support/provisioner-app';
import { Random } from './support/random';

/**
 * Guessing keys and tokens, as a family: every way a credential travels (header, query, the
 * query name percent-encoded, bearer token), from many client addresses (IPv4 and IPv6, told
 * apart by the trusted proxy's X-Forwarded-For), spread over two replicas of each service that
 * share their failure store. The defaults are in force: 20 failures per address and minute.
 */
const LIMIT = 20;
const ADDRESSES = 40;
const GUESSES_PER_ADDRESS = 30;
/** The process remembers at most this many blocked clients (AuthFailureLimiter's default). */
const MAX_BLOCKED_CLIENTS = 10_000;

interface Answer {
  status: number;
  retryAfter: string | null;
  contentType: string | null;
  body: string;
}

async function get(port: number, path: string, headers: Record<string, string>): Promise<Answer> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    headers,
    signal: AbortSignal.timeout(30_000),
  });
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    contentType: res.headers.get('content-type'),
    body: await res.text(),
  };
}

/** Runs `work` for each item, `concurrency` at a time. */
async function eachLimited<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

function addressOf(random: Random, i: number): string {
  if (i % 4 === 3)
    return `2001:db8:${i.toString(16)}:${random.int(65536).toString(16)}::${random.int(65536).toString(16)}`;
  return `198.18.${i >> 8}.${i & 255}`;
}

type Variant = (key: string) => { path: string; headers: Record<string, string> };

/** A request with a valid key and the status it must get (403: a scoped key off its route). */
interface ValidRequest {
  path: string;
  headers: Record<string, string>;
  status: number;
}

interface Service {
  name: string;
  ports: [number, number];
  variants: Variant[];
  validRequest: { path: string; headers: Record<string, string> };
  /** Every kind of valid key, sent from the guessers' own addresses while they guess. */
  sharedAddressRequests: ValidRequest[];
  limiters: AuthFailureLimiter[];
}

/**
 * Each address guesses GUESSES_PER_ADDRESS times in a row (addresses in parallel), alternating
 * replicas and variants, while one legitimate caller keeps working from an address of its own
 * and others, holding every kind of valid key, work from the guessers' addresses (a NAT, a
 * proxy, the worker's host): none of them may ever be refused. Returns what was wrong.
 */
async function guessingFamily(service: Service, seed: number): Promise<string[]> {
  const random = new Random(seed);
  const problems: string[] = [];
  const addresses = Array.from({ length: ADDRESSES }, (_, i) => addressOf(random, i));
  let legitimateAnswers = 0;
  let guessing = true;
  const legitimate = (async () => {
    while (guessing) {
      const answer = await get(service.ports[legitimateAnswers % 2], service.validRequest.path, {
        ...service.validRequest.headers,
        'X-Forwarded-For': '192.0.2.200',
      });
      if (answer.status !== 200)
        problems.push(`${service.name}: legitimate caller got ${answer.status}`);
      legitimateAnswers++;
    }
  })();
  let sharedAnswers = 0;
  const sharers = (async () => {
    while (guessing) {
      const request =
        service.sharedAddressRequests[sharedAnswers % service.sharedAddressRequests.length];
      const address = addresses[sharedAnswers % addresses.length];
      const answer = await get(service.ports[sharedAnswers % 2], request.path, {
        ...request.headers,
        'X-Forwarded-For': address,
      });
      if (answer.status !== request.status)
        problems.push(
          `${service.name}: valid key from guessing address ${address} on ${request.path} got ${answer.status}`,
        );
      sharedAnswers++;
    }
  })();
  await eachLimited(addresses, 8, async (address) => {
    const statuses: number[] = [];
    for (let i = 0; i < GUESSES_PER_ADDRESS; i++) {
      const { path, headers } = random.pick(service.variants)(
        randomBytes(24).toString('base64url'),
      );
      const answer = await get(service.ports[i % 2], path, {
        ...headers,
        'X-Forwarded-For': address,
      });
      statuses.push(answer.status);
      const envelope = JSON.parse(answer.body) as { status?: string; description?: string };
      if (answer.contentType !== 'application/json; charset=utf-8' || envelope.status !== 'Error') {
        problems.push(
          `${service.name} ${address} ${path}: not an error envelope: ${answer.body.slice(0, 200)}`,
        );
      }
      if (answer.status === 429 && !/^\d+$/.test(answer.retryAfter ?? '')) {
        problems.push(`${service.name} ${address}: 429 without Retry-After`);
      }
    }
    // Exactly LIMIT guesses are checked and refused with 401; every later one gets 429.
    const expected = [
      ...Array<number>(LIMIT).fill(401),
      ...Array<number>(GUESSES_PER_ADDRESS - LIMIT).fill(429),
    ];
    if (statuses.join() !== expected.join()) {
      problems.push(`${service.name} ${address}: statuses ${statuses.join(' ')}`);
    }
  });
  guessing = false;
  await legitimate;
  await sharers;
  if (legitimateAnswers === 0)
    problems.push(`${service.name}: the legitimate caller never got an answer`);
  if (sharedAnswers < service.sharedAddressRequests.length)
    problems.push(`${service.name}: only ${sharedAnswers} valid requests from guessing addresses`);
  const blocked = service.limiters.reduce((n, limiter) => n + limiter.blockedClients, 0);
  if (blocked > 2 * ADDRESSES)
    problems.push(`${service.name}: ${blocked} blocked clients remembered`);
  process.stdout.write(
    `${service.name}: ${ADDRESSES} addresses × ${GUESSES_PER_ADDRESS} guesses over 2 replicas, ` +
      `${legitimateAnswers} legitimate requests meanwhile and ${sharedAnswers} with valid keys ` +
      `from the guessing addresses, ${blocked} blocked clients remembered\n`,
  );
  return problems;
}

const apiKeyVariants = (path: string): Variant[] => [
  (key) => ({ path, headers: { 'X-API-Key': key } }),
  (key) => ({ path: `${path}?API_KEY=${key}`, headers: {} }),
  (key) => ({ path: `${path}?API%5FKEY=${key}`, headers: {} }),
  (key) => ({ path: `${path}?page=1&%41PI_KEY=${key}`, headers: {} }),
];

describe('guessing keys and tokens', () => {
  const common = { TRUSTED_PROXIES: '127.0.0.1' };

  describe('catalog-api', () => {
    let a: CatalogTestApp;
    let b: CatalogTestApp;
    const registrationKey = randomBytes(24).toString('base64url');

    beforeAll(async () => {
      const env = { ...common, REGISTRATION_API_KEY_SHA256: hashApiKey(registrationKey) };
      a = await startCatalogApp(env);
      b = await startCatalogApp(env, a.databaseUrl);
    });
    afterAll(async () => {
      await b.close();
      await a.close();
    });

    it('lets each address check exactly the limit of guesses, in every form, on any replica', async () => {
      const problems = await guessingFamily(
        {
          name: 'catalog-api',
          ports: [await portOf(a.server), await portOf(b.server)],
          variants: [
            ...apiKeyVariants('/api/projects'),
            (token) => ({ path: '/api/users', headers: { Authorization: `Bearer ${token}` } }),
          ],
          validRequest: { path: '/api/projects', headers: { 'X-API-Key': TEST_GLOBAL_KEY } },
          sharedAddressRequests: [
            { path: '/api/projects', headers: { 'X-API-Key': TEST_GLOBAL_KEY }, status: 200 },
            { path: `/api/cohorts?API_KEY=${TEST_GLOBAL_KEY}`, headers: {}, status: 200 },
            // The registration key is known (it passed) when refused off its route with 403.
            { path: '/api/projects', headers: { 'X-API-Key': registrationKey }, status: 403 },
          ],
          limiters: [a.app.get(AuthFailureLimiter), b.app.get(AuthFailureLimiter)],
        },
        Number(process.env.ROBUSTNESS_SEED ?? 20261122),
      );
      expect(problems.slice(0, 30)).toEqual([]);
    });
  });

  describe('provisioner API', () => {
    let a: INestApplication;
    let b: INestApplication;

    let env: Record<string, string>;

    beforeAll(async () => {
      env = {
        ...(await queueEnv()),
        STORAGE_ROOT: mkdtempSync(join(tmpdir(), 'robust-guessing-')),
      };
      const settings = provisionerTestSettings({ ...env, ...common });
      a = await createProvisionerApiApp(settings);
      await a.init();
      b = await createProvisionerApiApp(settings);
      await b.init();
    });
    afterAll(async () => {
      await b.close();
      await a.close();
    });

    it('lets each address check exactly the limit of guesses, dashboard included, on any replica', async () => {
      const problems = await guessingFamily(
        {
          name: 'provisioner-api',
          ports: [await portOf(a.getHttpServer()), await portOf(b.getHttpServer())],
          // The dashboard takes a key in the header or its login form, never in the URL.
          variants: [
            ...apiKeyVariants('/imports'),
            (key) => ({ path: '/admin/queues', headers: { 'X-API-Key': key } }),
          ],
          validRequest: { path: '/imports', headers: { 'X-API-Key': TEST_READ_KEY } },
          sharedAddressRequests: [
            { path: '/imports', headers: { 'X-API-Key': TEST_READ_KEY }, status: 200 },
            { path: '/imports', headers: { 'X-API-Key': TEST_WRITE_KEY }, status: 200 },
            { path: '/admin/queues', headers: { 'X-API-Key': TEST_WRITE_KEY }, status: 200 },
          ],
          limiters: [a.get(AuthFailureLimiter), b.get(AuthFailureLimiter)],
        },
        Number(process.env.ROBUSTNESS_SEED ?? 20261122) + 1,
      );
      expect(problems.slice(0, 30)).toEqual([]);
    });

    it('keeps the memory of blocked addresses bounded under a flood of distinct addresses', async () => {
      const flood = await createProvisionerApiApp(
        provisionerTestSettings({ ...env, ...common, AUTH_FAILURE_LIMIT: '1' }),
      );
      await flood.init();
      try {
        const port = await portOf(flood.getHttpServer());
        const limiter = flood.get(AuthFailureLimiter);
        const addresses = Array.from(
          { length: MAX_BLOCKED_CLIENTS + 1000 },
          (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
        );
        let refused = 0;
        await eachLimited(addresses, 16, async (address) => {
          for (let i = 0; i < 2; i++) {
            const answer = await get(port, '/imports', {
              'X-API-Key': 'guess',
              'X-Forwarded-For': address,
            });
            if (answer.status === 429) refused++;
          }
        });
        expect(refused).toBe(addresses.length);
        expect(limiter.blockedClients).toBe(MAX_BLOCKED_CLIENTS);
        process.stdout.write(
          `provisioner-api: ${addresses.length} addresses blocked, ${limiter.blockedClients} remembered by the process\n`,
        );
      } finally {
        await flood.close();
      }
    });
  });
});
