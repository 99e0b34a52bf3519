// What a REMS grant's trail append costs inside PostgreSQL (issue 59 item 5): one transaction
// writing a row of its own (as a grant writes its entitlement, so both sides commit to the WAL
// and wait for its flush) and the grant's two entries, as AuditRepository.insert writes them,
// through the chaining triggers ("on"), against the same statements whose entries a BEFORE
// INSERT trigger drops ("off", on a connection made as the trail bench's off catalog's), mixed
// call by call; beside them, a transaction holding only `SELECT 1` (a round trip, nothing to
// flush). A fresh migrated catalog
// database (built apps in .bench/dist: run the trail bench once first), dropped at the end.
//   npx ts-node -r tsconfig-paths/register --transpile-only scripts/bench/probes/grant-append-probe.ts
import { Client } from 'pg';
import { dropTrailRowsOnOffConnections } from '../lib/bench-database';
import { migratedCatalogDatabase } from '../lib/catalog-process';

const N = Number(process.env.PROBE_N ?? 4000);

function show(label: string, us: number[]): void {
  us.sort((a, b) => a - b);
  const at = (p: number) => us[Math.min(us.length - 1, Math.floor((p / 100) * us.length))];
  console.log(
    `${label.padEnd(52)} p50 ${at(50).toFixed(0).padStart(6)} µs  p99 ${at(99).toFixed(0).padStart(6)} µs`,
  );
}

async function main(): Promise<void> {
  const catalog = await migratedCatalogDatabase();
  const client = new Client({ connectionString: catalog.database.url });
  // As the bench's off catalog connects: every row it writes dropped by the trigger below.
  const offClient = new Client({
    connectionString: catalog.database.url,
    options: '-c bench.trail=off',
  });
  await client.connect();
  await offClient.connect();
  try {
    await dropTrailRowsOnOffConnections(client);
    await client.query('CREATE TABLE bench_grant (n integer NOT NULL)');
    const rows = (n: number) =>
      JSON.stringify([
        {
          actor_kind: 'system',
          actor_id: '1',
          actor_name: 'rems',
          action: 'create',
          object_type: 'person',
          object_id: String(n),
          change: { subject: `bench-grantee-${n}`, email: `grantee-${n}@uni.example` },
        },
        {
          actor_kind: 'system',
          actor_id: '1',
          actor_name: 'rems',
          action: 'grant',
          object_type: 'access',
          object_id: String(n),
          change: {
            application: n,
            dataset: 'CATALOG-DS-000123',
            subject: `bench-grantee-${n}`,
            duo: [],
          },
        },
      ]);
    const columns = 'actor_kind, actor_id, actor_name, action, object_type, object_id, change';
    const insert = `INSERT INTO audit_log (${columns})
      SELECT ${columns} FROM json_populate_recordset(NULL::audit_log, $1::json) WITH ORDINALITY AS e
      ORDER BY e.ordinality`;
    const kinds = ['on', 'off', 'select'] as const;
    const out: Record<(typeof kinds)[number], number[]> = { on: [], off: [], select: [] };
    let n = 0;
    for (let i = 0; i < 300 + N * 3; i++) {
      const kind = kinds[Math.floor(Math.random() * 3)];
      const c = kind === 'off' ? offClient : client;
      const t = process.hrtime.bigint();
      await c.query('BEGIN');
      if (kind === 'select') await c.query('SELECT 1');
      else {
        await c.query('INSERT INTO bench_grant (n) VALUES ($1)', [n]);
        await c.query(insert, [rows(n++)]);
      }
      await c.query('COMMIT');
      const us = Number(process.hrtime.bigint() - t) / 1000;
      if (i >= 300) out[kind].push(us);
    }
    show('two entries chained (on)', out.on);
    show('two entries dropped by the off trigger (off)', out.off);
    show('SELECT 1 (a round trip, nothing to flush)', out.select);
  } finally {
    await client.end();
    await offClient.end();
    await catalog.database.drop();
  }
}

void main();
