import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPrivateRedis } from '../../lib/private-redis';
import { BENCH_GLOBAL_KEY, migratedCatalogDatabase, startCatalog } from '../lib/catalog-process';
import type { BenchContext } from '../lib/context';
import { timeGet, timePost } from '../lib/http-load';
import { poll } from '../../../test/support/wait';
import {
  BENCH_WRITE_KEY,
  provisionerEnv,
  startProvisionerApi,
  startWorker,
} from '../lib/provisioner-process';
import { fmt, median, percentile, SuiteReport, table, verdict } from '../lib/report';

/** Registration is background work: a copy should be in the catalog within a second. */
const TARGET_MS = 1000;
const PROJECT = 'BENCH-REG';
const PARTNER = 'Bench Institute';

/** One completed submission of `count` small ready datasets, naming the catalog project. */
function writeDropzone(root: string, count: number): string[] {
  const ids = Array.from({ length: count }, (_, i) => `REG-${String(i).padStart(4, '0')}`);
  const write = (path: string, content: string) => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  };
  for (const id of ids) {
    const content = `payload of ${id}\n`;
    write(
      `datasets/${id}/dataset.json`,
      JSON.stringify({ dataset_id: id, submission: 'SUB-REG', title: `Registered ${id}` }),
    );
    write(`datasets/${id}/payload/data.txt`, content);
    const sha = createHash('sha256').update(content).digest('hex');
    write(`datasets/${id}/manifest-sha256.txt`, `${sha}  data.txt\n`);
    write(`datasets/${id}/.ready`, '');
  }
  write(
    'submissions/SUB-REG/submission.json',
    JSON.stringify({
      ref: 'SUB-REG',
      title: 'Registration bench',
      status: 'completed',
      project: PROJECT,
      partner: PARTNER,
      datasets: ids,
    }),
  );
  return ids;
}

/** Every 5 ms (the delay is measured in milliseconds), for at most a minute. */
const POLL = [60_000, 5] as const;

/**
 * Publish → visible in the catalog: datasets imported one at a time through the built API and
 * worker; for each, the time from the import's `finished_at` (the job completing, right after
 * the publishing rename and the enqueue) until `GET /api/datasets?title=` lists its copy. The
 * floor beside it: one direct `POST /api/registrations` round trip to the same catalog.
 */
export async function registrationBench(ctx: BenchContext): Promise<SuiteReport> {
  const count = ctx.quick ? 3 : 20;
  const base = join(ctx.tempDir, 'registration');
  const registrationKey = randomBytes(24).toString('hex');
  const catalogDb = await migratedCatalogDatabase();
  const redis = await startPrivateRedis({ dir: join(base, 'redis') });
  const catalog = await startCatalog({
    ...catalogDb.env,
    REGISTRATION_API_KEY_SHA256: createHash('sha256').update(registrationKey).digest('hex'),
  });
  const delays: number[] = [];
  const floor: number[] = [];
  try {
    const global = { 'X-API-Key': BENCH_GLOBAL_KEY };
    for (const [path, item] of [
      ['partners', { name: PARTNER, acronym: 'BENCH' }],
      ['projects', { acronym: PROJECT, name: 'Registration bench' }],
    ] as const) {
      const r = await timePost(
        `${catalog.url}/api/${path}`,
        JSON.stringify({ items: [item] }),
        global,
      );
      if (r.status !== 200) throw new Error(`POST /api/${path}: ${r.status} ${r.body.toString()}`);
    }
    const ids = writeDropzone(join(base, 'dropzone'), count);
    const env = provisionerEnv({
      redisUrl: redis.url,
      dropzone: join(base, 'dropzone'),
      storage: join(base, 'storage'),
      extra: { CATALOG_URL: catalog.url, CATALOG_API_KEY: registrationKey },
    });
    const api = await startProvisionerApi(env);
    const worker = await startWorker(env);
    try {
      const write = { 'X-API-Key': BENCH_WRITE_KEY };
      for (const id of ids) {
        const queued = await timePost(
          `${api.url}/datasets/dropzone/import`,
          JSON.stringify({ dataset_id: id }),
          write,
        );
        if (queued.status !== 202)
          throw new Error(`import ${id}: ${queued.status} ${queued.body.toString()}`);
        const importId = (JSON.parse(queued.body.toString()) as { id: string }).id;
        const finishedAt = await poll(
          async () => {
            const r = await timeGet(`${api.url}/imports/${importId}`, write);
            const record = JSON.parse(r.body.toString()) as {
              state: string;
              finished_at: string | null;
            };
            return record.state === 'imported' && record.finished_at
              ? Date.parse(record.finished_at)
              : undefined;
          },
          `import ${id}`,
          ...POLL,
        );
        const visibleAt = await poll(
          async () => {
            const r = await timeGet(
              `${catalog.url}/api/datasets?title=${encodeURIComponent(`Registered ${id}`)}`,
              global,
            );
            const items = (JSON.parse(r.body.toString()) as { items: { storages: unknown[] }[] })
              .items;
            return items[0]?.storages.length ? Date.now() : undefined;
          },
          `${id} in the catalog`,
          ...POLL,
        );
        delays.push(visibleAt - finishedAt);
      }
    } finally {
      await worker.stop();
      await api.stop();
    }
    for (let i = 0; i < count; i++) {
      const body = JSON.stringify({
        import_id: `floor-${i}`,
        dataset: { title: `Floor ${i}`, project: PROJECT },
        storage: { platform: 'floor', location: `floor/${i}` },
      });
      const r = await timePost(`${catalog.url}/api/registrations`, body, {
        'X-API-Key': registrationKey,
      });
      if (r.status !== 200)
        throw new Error(`direct registration: ${r.status} ${r.body.toString()}`);
      floor.push(r.ms);
    }
  } finally {
    await catalog.stop();
    await redis.stop();
    await catalogDb.database.drop();
  }
  const p50 = median(delays);
  const p95 = percentile(delays, 95);
  ctx.log(
    `registration delay over ${count} imports: median ${fmt(p50, 0)} ms, p95 ${fmt(p95, 0)} ms`,
  );
  const markdown = [
    '## Registration in the catalog',
    '',
    `${count} small dataset imports, one at a time, on the built API and worker (queue on a private Redis) and the`,
    "built catalog-api: the delay from the import record's `finished_at` (published, registration queued) until",
    '`GET /api/datasets?title=` lists the copy, polled every 5 ms. Floor: one direct `POST /api/registrations`.',
    `Target: median < ${TARGET_MS} ms.${ctx.quick ? ' **Quick mode: not a real figure.**' : ''}`,
    '',
    table(
      ['measure', 'median ms', 'p95 ms', 'max ms'],
      [
        ['publish → visible in the catalog', fmt(p50, 0), fmt(p95, 0), fmt(Math.max(...delays), 0)],
        [
          'direct POST /api/registrations (floor)',
          fmt(median(floor), 1),
          fmt(percentile(floor, 95), 1),
          fmt(Math.max(...floor), 1),
        ],
      ],
    ),
    '',
    `Median ${fmt(p50, 0)} ms (${fmt(p50 / median(floor), 1)}× the floor), target ${verdict(p50 < TARGET_MS)}.`,
  ].join('\n');
  return { name: 'registration', title: 'Registration', markdown, targetsMet: p50 < TARGET_MS };
}
