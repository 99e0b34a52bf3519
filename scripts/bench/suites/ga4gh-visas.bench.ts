import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { withClient } from '../lib/bench-database';
import { BENCH_GLOBAL_KEY, migratedCatalogDatabase, startCatalog } from '../lib/catalog-process';
import type { BenchContext } from '../lib/context';
import { measure, startCeiling, timeGet } from '../lib/http-load';
import { fmt, percentile, SuiteReport, table, verdict } from '../lib/report';

const GRANTS = 1000;
const P99_TARGET_MS = 50;
const SUBJECT = 'bench-visa-subject';

/**
 * A passport of 1,000 visas (one person with 1,000 active grants): the first read after the
 * grants (every visa signed), then repeated reads (visas kept signed in PostgreSQL), one at a
 * time and under 4 connections. Compared in the same run with a bare node:http server sending
 * the same body, and with what signing every visa on every read costs (REMS's way): 1,000
 * RS256 signatures with the same key, in this process.
 */
export async function ga4ghVisasBench(ctx: BenchContext): Promise<SuiteReport> {
  const runs = ctx.quick ? 20 : 300;
  const loadBefore = loadavg()[0];
  const catalog = await migratedCatalogDatabase();
  try {
    await withClient(catalog.database.url, async (c) => {
      await c.query(
        `WITH e AS (INSERT INTO endpoints (name, url_pattern, api_key_hash) VALUES ('Bench', 'https://x/\${entity_id}', repeat('b', 64)) RETURNING id),
           d AS (INSERT INTO datasets (title) SELECT 'Visa dataset ' || g FROM generate_series(1, $1) g RETURNING id)
         INSERT INTO exposures (form_id, dataset_id, endpoint_id) SELECT 1, d.id, e.id FROM d, e`,
        [GRANTS],
      );
      await c.query(
        `WITH u AS (INSERT INTO users (username, first_name, last_name, oidc_id, is_active)
                    VALUES ('visa', 'Visa', 'Holder', $1, true) RETURNING id)
         INSERT INTO accesses (dataset_id, user_id, status, granted_on, grant_expires_on)
         SELECT d.id, u.id, 'active', current_date,
                CASE WHEN d.id % 2 = 0 THEN current_date + 90 END
         FROM datasets d, u`,
        [SUBJECT],
      );
    });
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const keyFile = join(ctx.tempDir, 'visa-key.pem');
    writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const app = await startCatalog({ ...catalog.env, GA4GH_VISA_KEY_FILE: keyFile });
    const headers = { 'X-API-Key': BENCH_GLOBAL_KEY };
    const path = `/api/ga4gh/permissions/${SUBJECT}`;
    const app1 = { first: 0, reads: [] as number[], loaded: { p50: 0, p99: 0, rps: 0 } };
    const ceiling = { reads: [] as number[] };
    let body = Buffer.alloc(0);
    try {
      const first = await timeGet(app.url + path, headers);
      const visas = (JSON.parse(first.body.toString()) as { ga4gh_passport_v1: string[] })
        .ga4gh_passport_v1;
      if (first.status !== 200 || visas.length !== GRANTS)
        throw new Error(`the passport answered ${first.status} with ${visas.length} visas`);
      app1.first = first.ms;
      body = first.body;
      ctx.log(`first read (${GRANTS} visas signed): ${fmt(first.ms, 0)} ms`);
      for (let run = 0; run < runs; run++) {
        const r = await timeGet(app.url + path, headers);
        if (r.status !== 200 || r.body.length !== body.length) throw new Error('the passport changed');
        app1.reads.push(r.ms);
      }
      ctx.log(`repeated reads: p50 ${fmt(percentile(app1.reads, 50), 1)} ms, p99 ${fmt(percentile(app1.reads, 99), 1)} ms`);
      const loaded = await measure({
        url: app.url,
        headers,
        paths: [path],
        connections: 4,
        durationSeconds: ctx.quick ? 2 : 10,
      });
      if (loaded.failures > 0) throw new Error(`${loaded.failures} failed requests under load`);
      app1.loaded = { p50: loaded.p50Ms, p99: loaded.p99Ms, rps: loaded.requestsPerSecond };
    } finally {
      await app.stop();
    }
    const bare = await startCeiling(ctx.tempDir, body, 'application/json');
    try {
      for (let run = 0; run < runs; run++) ceiling.reads.push((await timeGet(bare.url + path)).ms);
    } finally {
      await bare.stop();
    }
    const signEvery = signingCost(privateKey, ctx.quick ? 3 : 10);
    ctx.log(`signing ${GRANTS} visas: ${fmt(signEvery, 0)} ms`);
    const load = [loadBefore, loadavg()[0]];
    return report(app1, ceiling.reads, signEvery, runs, body.length, load, ctx.quick);
  } finally {
    await catalog.database.drop();
  }
}

/** Median time to sign GRANTS visa-sized JWS with this key (what a read costs without a store). */
function signingCost(key: ReturnType<typeof generateKeyPairSync>['privateKey'], rounds: number): number {
  const header = Buffer.from(JSON.stringify({ alg: 'RS256', jku: 'https://c.example/api/jwk', typ: 'JWT', kid: 'k' })).toString('base64url');
  const times: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    for (let i = 0; i < GRANTS; i++) {
      const claims = {
        iss: 'https://c.example',
        sub: SUBJECT,
        iat: 1,
        exp: 2,
        ga4gh_visa_v1: { type: 'ControlledAccessGrants', value: `ELU_I_${i}`, source: 'https://c.example', by: 'dac', asserted: 1 },
        jti: randomUUID(),
      };
      const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
      sign('sha256', Buffer.from(input), key);
    }
    times.push(performance.now() - started);
  }
  return percentile(times, 50);
}

function report(
  app: { first: number; reads: number[]; loaded: { p50: number; p99: number; rps: number } },
  ceiling: number[],
  signEvery: number,
  runs: number,
  bytes: number,
  load: number[],
  quick: boolean,
): SuiteReport {
  const p99 = percentile(app.reads, 99);
  const ok = p99 < P99_TARGET_MS;
  const markdown = [
    '## GA4GH passport visas',
    '',
    `\`GET /api/ga4gh/permissions/<subject>\` for one person with ${GRANTS.toLocaleString('en')} active grants (half with an end date), every`,
    `dataset exposed: a passport of ${GRANTS.toLocaleString('en')} RS256 visas (2048-bit key), ${fmt(bytes / 1024, 0)} KiB of JSON. Client-side times incl. HTTP,`,
    `the built app, LOG_LEVEL=warn; ${runs} reads one at a time, then 4 connections.${quick ? ' **Quick mode: not a real figure.**' : ''}`,
    'Visas are kept signed in PostgreSQL (`ga4gh_visas`) until their access changes, so a read signs nothing',
    'unless a grant changed; which visas a passport holds is decided from the accesses on every read.',
    '',
    table(
      ['read', 'p50 ms', 'p99 ms', 'note', `p99 < ${P99_TARGET_MS} ms`],
      [
        ['first read (every visa signed and stored)', fmt(app.first, 0), '', 'once per grant change', ''],
        ['repeated reads, one at a time', fmt(percentile(app.reads, 50), 1), `**${fmt(p99, 1)}**`, '', verdict(ok)],
        ['repeated reads, 4 connections', fmt(app.loaded.p50, 0), fmt(app.loaded.p99, 0), `${fmt(app.loaded.rps, 0)} passports/s`, ''],
        ['ceiling: bare node:http, same body', fmt(percentile(ceiling, 50), 1), fmt(percentile(ceiling, 99), 1), '', ''],
        [`signing ${GRANTS.toLocaleString('en')} visas on every read (REMS's way)`, fmt(signEvery, 0), '', 'CPU time of the signatures alone', ''],
      ],
    ),
    '',
    `Load average (1 min) of the 2-core machine at the start and end of the run: ${load.map((l) => fmt(l, 1)).join(' and ')}:`,
    'the other work on the machine slows the ceiling and the signatures too, so compare the rows with each other.',
  ].join('\n');
  return { name: 'ga4gh-visas', title: 'GA4GH passport visas', markdown, targetsMet: ok };
}
