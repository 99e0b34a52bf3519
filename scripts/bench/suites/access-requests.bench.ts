import { withClient } from '../lib/bench-database';
import { migratedCatalogDatabase, startCatalog } from '../lib/catalog-process';
import type { BenchContext } from '../lib/context';
import { startCeiling, timePost } from '../lib/http-load';
import { fmt, percentile, SuiteReport, table, verdict } from '../lib/report';

/** REMS gives up on a delivery after 2.5 s (CSCfi/rems `post-entitlements!`, :socket-timeout). */
const REMS_TIMEOUT_MS = 2500;
/** "Well under" REMS's time-out: a delivery must leave it more than half of it. */
const P99_TARGET_MS = 1250;
/** The webhook's largest delivery (MAX_ENTITLEMENTS). */
const ROWS = 1000;
const DATASETS = 50;
const APPLICATION = 90_001;

interface Row {
  application: number;
  resource: string;
  user: string;
  mail: string | null;
  end: string | null;
}

interface Kind {
  label: string;
  path: '/api/accessreq' | '/api/accessreq/revoke';
  /** The delivery of run `run`; `seed` prepares the catalog for it (not timed). */
  body(run: number): Row[];
  seed?(run: number): Promise<void>;
}

interface KindResult {
  label: string;
  entitlements: number;
  app: number[];
  ceiling: number[];
}

/**
 * 1,000 entitlements in one POST, as CSCfi/rems builds them, against REMS's 2.5 s time-out;
 * each delivery is sent one at a time, as REMS's outbox does. The ceiling is a bare node:http
 * server in its own process that reads and parses the same body and answers 200.
 */
export async function accessRequestsBench(ctx: BenchContext): Promise<SuiteReport> {
  const runs = ctx.quick ? 3 : 15;
  const catalog = await migratedCatalogDatabase();
  try {
    const accessions = await withClient(catalog.database.url, async (c) =>
      (
        await c.query<{ elu_accession: string }>(
          `INSERT INTO datasets (title) SELECT 'Bench dataset ' || g FROM generate_series(1, $1) g
           RETURNING elu_accession`,
          [DATASETS],
        )
      ).rows.map((r) => r.elu_accession),
    );
    const row = (run: number, i: number, end: string | null): Row => ({
      application: APPLICATION + run,
      resource: accessions[i % DATASETS],
      user: `bench-subject-${run}-${i}`,
      mail: `person-${run}-${i}@uni.example`,
      end,
    });
    const delivery = (run: number, n: number, end: (i: number) => string | null) =>
      Array.from({ length: n }, (_, i) => row(run, i, end(i)));
    const revokedAt = new Date(Date.now() - 3_600_000).toISOString();
    const app = await startCatalog({
      ...catalog.env,
      ACCESSREQ_INTEGRATION_ENABLED: 'true',
      ACCESSREQ_ALLOWED_IP_ADDRESSES: '127.0.0.1',
    });
    const post = async (path: string, rows: Row[]) => {
      const r = await timePost(app.url + path, JSON.stringify(rows));
      if (r.status !== 200) throw new Error(`${path} answered ${r.status}: ${r.body.toString().slice(0, 300)}`);
      return r;
    };
    const kinds: Kind[] = [
      {
        label: 'new: 1,000 people unknown to the catalog (1,000 contacts and accesses created)',
        path: '/api/accessreq',
        body: (run) => delivery(run, ROWS, () => null),
      },
      {
        label: 'repeated: the same delivery again (a REMS retry; nothing changes)',
        path: '/api/accessreq',
        body: (run) => delivery(run, ROWS, () => null),
      },
      {
        label: 'revoke: 1,000 revocations of running accesses',
        path: '/api/accessreq/revoke',
        body: (run) => delivery(run, ROWS, () => revokedAt),
      },
      {
        label: 're-grant: 500 entitlements × (the revoked row + the new open row)',
        path: '/api/accessreq',
        body: (run) =>
          delivery(run, ROWS / 2, () => revokedAt).flatMap((r) => [r, { ...r, end: null }]),
      },
    ];
    const results: KindResult[] = [];
    try {
      // One untimed delivery first: the process's first request pays for lazy start-up work.
      await post('/api/accessreq', delivery(runs + 1, 10, () => null));
      for (const kind of kinds) {
        const result: KindResult = { label: kind.label, entitlements: 0, app: [], ceiling: [] };
        for (let run = 0; run < runs; run++) {
          const rows = kind.body(run);
          const answer = await post(kind.path, rows);
          const counts = JSON.parse(answer.body.toString()) as Record<string, number>;
          result.entitlements = counts.created + counts.updated + counts.unchanged;
          result.app.push(answer.ms);
        }
        results.push(result);
        ctx.log(`${kind.label.split(':')[0]}: p50 ${fmt(percentile(result.app, 50), 0)} ms, p99 ${fmt(percentile(result.app, 99), 0)} ms`);
      }
      const ceiling = await startCeiling(ctx.tempDir, Buffer.from('{"status":"Success"}'), 'application/json', {
        parseJsonBodies: true,
      });
      try {
        for (const [k, kind] of kinds.entries()) {
          for (let run = 0; run < runs; run++) {
            const r = await timePost(ceiling.url + kind.path, JSON.stringify(kind.body(run)));
            results[k].ceiling.push(r.ms);
          }
        }
      } finally {
        await ceiling.stop();
      }
    } finally {
      await app.stop();
    }
    return report(results, runs, ctx.quick);
  } finally {
    await catalog.database.drop();
  }
}

function report(results: KindResult[], runs: number, quick: boolean): SuiteReport {
  const rows = results.map((r) => {
    const p99 = percentile(r.app, 99);
    return {
      ok: p99 < P99_TARGET_MS,
      cells: [
        r.label,
        r.entitlements,
        fmt(percentile(r.app, 50), 0),
        `**${fmt(p99, 0)}**`,
        `${fmt(percentile(r.ceiling, 50), 1)} / ${fmt(percentile(r.ceiling, 99), 1)}`,
        verdict(p99 < P99_TARGET_MS),
      ],
    };
  });
  const markdown = [
    '## REMS entitlement deliveries',
    '',
    `One POST of ${ROWS.toLocaleString('en')} rows to the webhook (its largest delivery), shaped as CSCfi/rems builds them, over`,
    `${DATASETS} datasets; ${runs} deliveries of each kind, one at a time as REMS's outbox sends them (client-side time incl. HTTP;`,
    'the built app, LOG_LEVEL=warn, no identity provider configured). REMS gives up on a delivery after',
    `${REMS_TIMEOUT_MS} ms and retries it; target: p99 < ${P99_TARGET_MS} ms, half of that.${quick ? ' **Quick mode: not a real figure.**' : ''}`,
    'Ceiling: a bare `node:http` server in its own process that reads and parses the same body and answers 200.',
    '',
    table(['delivery', 'entitlements', 'p50 ms', 'p99 ms', 'ceiling p50 / p99 ms', `p99 < ${P99_TARGET_MS} ms`], rows.map((r) => r.cells)),
    '',
    'With an identity provider configured, each distinct subject is also looked up in it (8 at a time, within a',
    '1.5 s budget; beyond it the delivery is answered 503 and REMS retries). REMS itself sends one (application,',
    'user, resource) per delivery, so real deliveries hold one to a few rows.',
  ].join('\n');
  return { name: 'access-requests', title: 'REMS entitlement deliveries', markdown, targetsMet: rows.every((r) => r.ok) };
}
