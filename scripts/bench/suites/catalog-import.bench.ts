import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deployedNodeArgs } from '../../lib/deployed-node-args';
import { datasetItems, partnerRows, partnersCsv } from '../data/catalog-import-data';
import { migratedCatalogDatabase, startCatalog } from '../lib/catalog-process';
import type { BenchContext } from '../lib/context';
import { importDocument } from '../lib/http-load';
import { processMemory } from '../lib/processes';
import { fmt, SuiteReport, table, verdict } from '../lib/report';

/** One document of this many records must import well inside the ingress's time-out (120 s). */
const TARGET_MS = 60_000;
const MiB = 1024 * 1024;

interface Row {
  kind: string;
  action: 'create' | 'update';
  records: number;
  bodyBytes: number;
  ms: number;
  peakBytes: number;
  /** COPY of the same rows into a table of the same shape, when there is such an equivalent. */
  copyMs?: number;
}

/**
 * What a user would do instead for rows that need no references resolved: psql's `\copy` of the
 * same rows into an empty table shaped like the catalog's (defaults, constraints, indexes).
 */
function copyPartners(databaseUrl: string, csvPath: string): number {
  const psql = (command: string) => {
    const out = spawnSync('psql', [databaseUrl, '-v', 'ON_ERROR_STOP=1', '-qc', command], {
      encoding: 'utf8',
    });
    if (out.status !== 0) throw new Error(`psql failed: ${out.stderr}`);
  };
  psql('CREATE TABLE bench_partners_copy (LIKE partners INCLUDING ALL)');
  const started = performance.now();
  psql(
    `\\copy bench_partners_copy (name, acronym, geo_category, sector_category, country_code, address) FROM '${csvPath}' CSV`,
  );
  return performance.now() - started;
}

export async function catalogImportBench(ctx: BenchContext): Promise<SuiteReport> {
  const records = ctx.quick ? 5000 : 50_000;
  const catalog = await migratedCatalogDatabase();
  const nodeArgs = deployedNodeArgs('catalog-api/deployment.yaml');
  const rows: Row[] = [];
  try {
    const partners = partnerRows(records, 'bench');
    const csvPath = join(ctx.tempDir, 'partners.csv');
    writeFileSync(csvPath, partnersCsv(partners));
    const copyMs = copyPartners(catalog.database.url, csvPath);
    ctx.log(`COPY of ${records} partners: ${fmt(copyMs, 0)} ms`);

    const app = await startCatalog(catalog.env, nodeArgs);
    try {
      const pid = app.child.pid!;
      await importDocument(
        app.url,
        'projects',
        JSON.stringify({ items: [{ acronym: 'BENCH', name: 'Bench project' }] }),
      );
      const documents = [
        { kind: 'partners', body: JSON.stringify({ items: partners }), copyMs },
        {
          kind: 'datasets',
          body: JSON.stringify({ items: datasetItems(records, 'bench', 'BENCH') }),
        },
      ];
      for (const { kind, body, copyMs: copy } of documents) {
        for (const action of ['create', 'update'] as const) {
          const ms = await importDocument(app.url, kind, body);
          rows.push({
            kind,
            action,
            records,
            bodyBytes: Buffer.byteLength(body),
            ms,
            peakBytes: processMemory(pid, 'VmHWM'),
            copyMs: action === 'create' ? copy : undefined,
          });
          ctx.log(`${action} ${records} ${kind} in one document: ${fmt(ms / 1000)} s`);
        }
      }
      const idle = processMemory(pid, 'VmRSS');
      return report(rows, nodeArgs, idle, ctx.quick);
    } finally {
      await app.stop();
    }
  } finally {
    await catalog.database.drop();
  }
}

function report(
  rows: Row[],
  nodeArgs: string[],
  residentAfter: number,
  quick: boolean,
): SuiteReport {
  const ok = rows.every((r) => r.ms < TARGET_MS);
  const markdown = [
    '## Catalog imports',
    '',
    `One document of ${rows[0].records.toLocaleString('en')} records per request to the built catalog-api (\`node ${nodeArgs.join(' ')}\`,`,
    'as deployed), with the global key: first into an empty catalog (create), then the same document again (update).',
    'Partners carry six fields; datasets a contact, a storage location with an access and a declaration with two use',
    'conditions (about 570 bytes each). Time from the request until its answer is read: validation, reference resolution,',
    'all writes and the audit entries in one transaction. Ceiling for partners: psql `\\copy` of the same rows into an',
    'empty table shaped like `partners` (no matching, no audit); datasets have no such equivalent.',
    `Peak = VmHWM of the catalog process so far. Target: each document < ${TARGET_MS / 1000} s.${quick ? ' **Quick mode: not a real figure.**' : ''}`,
    '',
    table(
      [
        'document',
        'records',
        'MiB',
        'import s',
        'records/s',
        'COPY s',
        'import ÷ COPY',
        'peak resident MiB',
        'target',
      ],
      rows.map((r) => [
        `${r.kind}, ${r.action}`,
        r.records,
        fmt(r.bodyBytes / MiB),
        `**${fmt(r.ms / 1000)}**`,
        fmt(r.records / (r.ms / 1000), 0),
        r.copyMs === undefined ? '–' : fmt(r.copyMs / 1000, 2),
        r.copyMs === undefined ? '–' : `${fmt(r.ms / r.copyMs)}×`,
        fmt(r.peakBytes / MiB, 0),
        verdict(r.ms < TARGET_MS),
      ]),
    ),
    '',
    `Resident after the last import: ${fmt(residentAfter / MiB, 0)} MiB. Target: ${ok ? 'met' : '**missed**'}.`,
  ].join('\n');
  return { name: 'catalog-import', title: 'Catalog imports', markdown, targetsMet: ok };
}
