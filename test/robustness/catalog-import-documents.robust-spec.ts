import { request } from 'node:http';
import { DataSource } from 'typeorm';
import { buildTypeOrmOptions } from '../../apps/catalog-api/src/typeorm-options';
import { KEYS } from '../../apps/catalog-api/test/demo-catalog.fixture';
import { deployedLivenessTimeoutMs, deployedNodeArgs } from '../../scripts/lib/deployed-node-args';
import { AppProcess, entryCommand } from '../support/app-process';
import { createCatalogDatabase } from '../support/databases';
import { cpuMs } from '../../scripts/lib/child-process';
import { processPeaks } from '../support/process-memory';
import { catalogFingerprint } from './support/catalog-snapshot';
import { probeOnce } from './support/kubelet-probe';
import { startCatalogProcess } from './support/catalog-process';

const MiB = 1024 * 1024;
/** Most problems an answer lists (MAX_REPORTED_PROBLEMS). */
const LISTED = 1000;
/**
 * /health/live must answer within this while documents are checked: the time the kubelet gives
 * one liveness probe (the Deployment's timeoutSeconds), past which it counts a failure. Checking
 * 200,000 records holds the event loop for about 1 s on a loaded machine (1,062 ms measured).
 * A probe is held to it by the catalog's own time: the shorter of its wait and the CPU time the
 * catalog spent meanwhile. With a core of its own the two are the same; on a machine running
 * other work beside the test, the catalog's share of a core stretches the wait (3.6 s at load
 * 20 for 0.4 s of work), which says nothing of how long its event loop was held.
 */
const HEALTH_BOUND_MS = deployedLivenessTimeoutMs('catalog-api/deployment.yaml');

const list = (n: number, item: string) => Array<string>(n).fill(item).join();
const document = (n: number, item: string) => `{"items":[${list(n, item)}]}`;

/**
 * Import documents whose size the client chooses, by family: duplicates (the spread that
 * answered 500), records that are all wrong (the 56 MB answer), records of every wrong type,
 * more arrays and objects than MAX_JSON_OBJECTS, and nesting past MAX_JSON_DEPTH. Each is sent
 * to the import route it attacks, one after the other, to a catalog run as deployed.
 */
const ATTACKS: { name: string; path: string; body: () => string; refusal: RegExp }[] = [
  {
    name: '200,000 partners of one name',
    path: '/api/partners',
    body: () => document(200_000, '{"name":"Twin"}'),
    refusal: /^Invalid input: \d+ problems$/,
  },
  {
    name: '200,000 datasets of one external id, in any case and spacing',
    path: '/api/datasets',
    body: () =>
      `{"items":[${Array.from({ length: 200_000 }, (_, i) => `{"name":"D${i}","project":"P","external_id":"${i % 2 ? ' dup' : 'DUP '}"}`).join()}]}`,
    refusal: /^Invalid input: \d+ problems$/,
  },
  {
    name: '100,000 projects of one acronym and title',
    path: '/api/projects',
    body: () => document(100_000, '{"acronym":"SAME","name":"Same"}'),
    refusal: /^Invalid input: \d+ problems$/,
  },
  {
    name: '500,000 empty partners',
    path: '/api/partners',
    body: () => document(500_000, '{}'),
    refusal: /^Invalid input: \d+ problems$/,
  },
  {
    name: '600,000 records that are no objects',
    path: '/api/cohorts',
    body: () =>
      `{"items":[${list(200_000, 'null')},${list(200_000, '7')},${list(200_000, '"x"')}]}`,
    refusal: /^Invalid input: \d+ problems$/,
  },
  {
    name: '100,000 contracts with every field wrong',
    path: '/api/contracts',
    body: () =>
      document(
        100_000,
        '{"name":1,"project":[],"partners":{},"local_custodians":"x","unknown":true,"comments":5}',
      ),
    refusal: /^Invalid input: \d+ problems$/,
  },
  {
    name: '1,000,001 empty partners (past MAX_JSON_OBJECTS)',
    path: '/api/partners',
    body: () => document(1_000_001, '{}'),
    refusal: /arrays and objects$/,
  },
  {
    name: '10,700,000 empty arrays in one record (32 MiB)',
    path: '/api/datasets',
    body: () => `{"items":[{"name":"x","storages":[${list(10_700_000, '[]')}]}]}`,
    refusal: /arrays and objects$/,
  },
  {
    name: 'a record nested 10,000 levels deep',
    path: '/api/partners',
    body: () => `{"items":[{"name":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}]}`,
    refusal: /nested deeper than 64 levels$/,
  },
];

/**
 * One POST on a connection of its own (Node's http, no pool), its whole answer read. The test
 * builds its bodies first, holding its event loop for seconds on a loaded machine: fetch's pooled
 * connection from the readiness check, idle past the server's keep-alive time-out (5 s) by then,
 * was closed under the body's write (EPIPE) before the pool had seen the close.
 */
function post(
  url: string,
  apiKey: string,
  body: Buffer,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': body.length,
          'X-API-Key': apiKey,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.once('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
        );
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

describe('catalog-api under import documents of hostile size', () => {
  let app: AppProcess;
  let url: string;
  let data: DataSource;
  const nodeArgs = deployedNodeArgs('catalog-api/deployment.yaml');

  beforeAll(async () => {
    const databaseUrl = await createCatalogDatabase();
    data = new DataSource(
      buildTypeOrmOptions({ DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: 1 }),
    );
    await data.initialize();
    ({ app, url } = await startCatalogProcess(databaseUrl, { LOG_LEVEL: 'warn' }, nodeArgs));
  }, 90_000);
  afterAll(async () => {
    app?.child.kill('SIGTERM');
    await app?.exited;
    await data?.destroy();
  });

  it('answers every family with a bounded 400, keeps /health/live answering and stays inside its pod limit', async () => {
    const before = await catalogFingerprint(data);
    // Built before the health probe starts: this process must not stall it while building them.
    const bodies = ATTACKS.map((attack) => Buffer.from(attack.body()));
    let checking = true;
    let slowestHealthMs = 0;
    /** The most catalog time a probe waited for (see HEALTH_BOUND_MS). */
    let longestHeldMs = 0;
    let healthAnswers = 0;
    /** The slowest health answer while the current attack ran. */
    let slowestNowMs = 0;
    const pid = app.child.pid!;
    const health = (async () => {
      while (checking) {
        const cpuBefore = cpuMs(pid);
        const { status, ms } = await probeOnce(`${url}/health/live`, 10_000);
        longestHeldMs = Math.max(longestHeldMs, Math.min(ms, cpuMs(pid) - cpuBefore));
        slowestHealthMs = Math.max(slowestHealthMs, ms);
        slowestNowMs = Math.max(slowestNowMs, ms);
        if (status === 200) healthAnswers++;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const seen: string[] = [];
    try {
      for (const [n, attack] of ATTACKS.entries()) {
        const started = performance.now();
        slowestNowMs = 0;
        const res = await post(`${url}${attack.path}`, KEYS.global, bodies[n]);
        const { text } = res;
        const body = JSON.parse(text) as {
          description: string;
          more: { errors?: unknown[]; error_count?: number };
        };
        seen.push(
          `${attack.name}: ${res.status} in ${(performance.now() - started).toFixed(0)} ms, ` +
            `${text.length} bytes, ${body.more.error_count ?? body.more.errors?.length ?? 0} problems, ` +
            `health at worst ${slowestNowMs.toFixed(0)} ms`,
        );
        expect({ attack: attack.name, status: res.status }).toEqual({
          attack: attack.name,
          status: 400,
        });
        expect(body.description).toMatch(attack.refusal);
        expect(body.more.errors?.length ?? 0).toBeLessThanOrEqual(LISTED);
        expect(text.length).toBeLessThan(300_000);
      }
    } finally {
      checking = false;
      await health;
    }
    // The harness samples the app's peak and holds it to its pod limit once the file is done
    // (support/memory-limits.ts); printed here beside the answers that caused it.
    const peak = processPeaks().find((p) => p.pid === app.child.pid);
    const peakMiB = (peak?.peakBytes ?? 0) / MiB;
    process.stdout.write(
      `catalog import documents (${entryCommand('catalog-api', 'src/main').built ? 'built app' : 'TypeScript sources'}, ` +
        `node ${nodeArgs.join(' ')}):\n  ${seen.join('\n  ')}\n` +
        `  /health/live: ${healthAnswers} answers, slowest ${slowestHealthMs.toFixed(0)} ms ` +
        `(the catalog's CPU time meanwhile at most ${longestHeldMs.toFixed(0)} ms); ` +
        `peak resident set ${peakMiB.toFixed(0)} MiB\n`,
    );
    expect(longestHeldMs).toBeLessThan(HEALTH_BOUND_MS);
    expect(app.child.exitCode).toBeNull();
    expect(await catalogFingerprint(data)).toEqual(before);
  });
});
