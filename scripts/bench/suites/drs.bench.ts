import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { startPrivateRedis } from '../../lib/private-redis';
import { migratedCatalogDatabase, startCatalog } from '../lib/catalog-process';
import type { BenchContext } from '../lib/context';
import { timeGet, timePost } from '../lib/http-load';
import { freePort, processMemory } from '../lib/processes';
import { provisionerEnv, startProvisionerApi, startWorker } from '../lib/provisioner-process';
import { fmt, median, percentile, SuiteReport, table, verdict } from '../lib/report';
import { startOffloadNginx } from '../../../test/support/nginx';
import { bigFile, smallFile, writeDataset } from '../data/drs-data';
import { drsKeys, drsProject, grantedPassports, importAndRegister } from '../lib/drs-setup';
import { poll } from '../../../test/support/wait';

/** Access URL reads at 0.9× nginx serving the same file with sendfile, or better. */
const THROUGHPUT_TARGET = 0.9;
/** Access decisions for 1,000 objects in one bulk request, p99. */
const BULK_TARGET_MS = 200;
const PROJECT = 'BENCH-DRS';
const READER = 'bench-drs-reader';
const MiB = 1024 * 1024;

/** nginx (Debian) serving `root` with sendfile on a free loopback port. */
async function startNginx(dir: string, root: string) {
  const port = await freePort();
  mkdirSync(join(dir, 'logs'), { recursive: true });
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `daemon off; worker_processes 1; user root; pid ${dir}/nginx.pid; error_log ${dir}/logs/error.log;
events { worker_connections 64; }
http { sendfile on; tcp_nopush on; access_log off; client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fcgi; uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server { listen 127.0.0.1:${port}; root ${root}; } }\n`,
  );
  const child = spawn('nginx', ['-c', conf, '-p', dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  await poll(
    async () => ((await fetch(url).catch(() => null)) === null ? undefined : true),
    'nginx',
    10_000,
  );
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGQUIT');
      }),
  };
}

/**
 * curl's download speed (bytes/s) for `url`, the body discarded, optionally one range and request
 * headers (`Name: value`).
 */
export function curlSpeed(url: string, range?: string, headers: string[] = []): number {
  const args = ['-s', '-o', '/dev/null', '-w', '%{http_code} %{speed_download}'];
  if (range !== undefined) args.push('-r', range);
  for (const header of headers) args.push('-H', header);
  const out = spawnSync('curl', [...args, url], { encoding: 'utf8' });
  const [code, speed] = out.stdout.split(' ');
  if (out.status !== 0 || !/^20[06]$/.test(code))
    throw new Error(`curl ${url}: exit ${out.status}, HTTP ${code} ${out.stderr}`);
  return Number(speed);
}

/** One round's speeds (bytes/s): the API alone, the API offloaded to nginx, nginx alone. */
interface Speeds {
  drs: number;
  offload: number;
  nginx: number;
}

/**
 * DRS: the bytes of a 1 GiB file read through its access URL against nginx serving the same file
 * with sendfile, whole and in 64 MiB ranges, interleaved, with curl as the client: the provisioner
 * API sending the file itself (DRS_BYTES_OFFLOAD=off) and a second API process offloading to an
 * nginx from deploy/nginx/drs-offload.conf.template (DRS_BYTES_OFFLOAD=nginx). And the access
 * decisions of one bulk request for 1,000 objects (passport of the catalog's visas, grant check,
 * 1,000 objects resolved).
 */
export async function drsBench(ctx: BenchContext): Promise<SuiteReport> {
  const bigBytes = (ctx.quick ? 64 : 1024) * MiB;
  const manyFiles = ctx.quick ? 100 : 1000;
  const rounds = ctx.quick ? 2 : 5;
  const bulkRounds = ctx.quick ? 10 : 100;
  const base = join(ctx.tempDir, 'drs');
  mkdirSync(base, { recursive: true });
  const { registrationKey, brokerKey, catalogPort, catalogUrl, catalogEnv } = await drsKeys(base);
  const catalogDb = await migratedCatalogDatabase();
  const redis = await startPrivateRedis({ dir: join(base, 'redis') });
  const catalog = await startCatalog(
    {
      ...catalogDb.env,
      ...catalogEnv,
    },
    [],
    catalogPort,
  );
  const whole: Speeds[] = [];
  const ranged: Speeds[] = [];
  const rangeBytes = Math.min(64 * MiB, bigBytes / 4);
  const loads: number[] = [];
  const bulk: number[] = [];
  let apiMemoryMiB = 0;
  try {
    const dropzone = join(base, 'dropzone');
    ctx.log(`writing a ${bigBytes / MiB} MiB file and ${manyFiles} small ones`);
    writeDataset(dropzone, 'DRS-BIG', { 'big.bin': bigFile(bigBytes) });
    writeDataset(
      dropzone,
      'DRS-MANY',
      Object.fromEntries(
        Array.from({ length: manyFiles }, (_, i) => [`f${i}.txt`, smallFile(`file ${i}\n`)]),
      ),
    );
    await drsProject(catalog.url, dropzone, {
      acronym: PROJECT,
      name: 'DRS bench',
      datasets: ['DRS-BIG', 'DRS-MANY'],
    });
    const apiPort = await freePort();
    const drsUrl = `http://127.0.0.1:${apiPort}`;
    const storage = join(base, 'storage');
    const env = provisionerEnv({
      redisUrl: redis.url,
      dropzone,
      storage,
      extra: {
        CATALOG_URL: catalog.url,
        CATALOG_API_KEY: registrationKey,
        DRS_PUBLIC_URL: drsUrl,
        DRS_VISA_ISSUER: catalogUrl,
        DRS_CATALOG_BROKER_KEY: brokerKey,
        // Production (NODE_ENV) requires it: replicas share the key that signs access URLs.
        DRS_URL_SIGNING_KEY: randomBytes(32).toString('base64url'),
      },
    });
    const api = await startProvisionerApi(env, apiPort);
    const worker = await startWorker(env);
    const nginx = await startNginx(join(base, 'nginx'), storage);
    const offloadApiPort = await freePort();
    const offloadPort = await freePort();
    const offloadApi = await startProvisionerApi(
      {
        ...env,
        DRS_PUBLIC_URL: `http://127.0.0.1:${offloadPort}`,
        DRS_BYTES_OFFLOAD: 'nginx',
      },
      offloadApiPort,
    );
    const offload = await startOffloadNginx(
      join(base, 'offload-nginx'),
      `127.0.0.1:${offloadApiPort}`,
      storage,
      offloadPort,
    );
    try {
      const accessions: string[] = [];
      for (const id of ['DRS-BIG', 'DRS-MANY']) accessions.push(await importAndRegister(api.url, id));
      const passports = await grantedPassports(
        catalog.url,
        catalogDb.database.url,
        READER,
        accessions,
        'DRS bench',
      );
      const drs = `${api.url}/ga4gh/drs/v1`;
      const post = async (path: string, body: unknown) => {
        const r = await timePost(`${drs}${path}`, JSON.stringify(body));
        if (r.status !== 200) throw new Error(`POST ${path}: ${r.status} ${r.body.toString()}`);
        return { ms: r.ms, body: JSON.parse(r.body.toString()) as Record<string, unknown> };
      };
      const manifest = async (id: string) => {
        const { body } = await post(`/objects/${id}/access/https`, { passports });
        const r = await timeGet(body.url as string);
        return JSON.parse(r.body.toString()) as { objects: { id: string; path: string }[] };
      };
      const [big] = (await manifest(`${PROJECT}~SUB-DRS~DRS-BIG`)).objects;
      const many = (await manifest(`${PROJECT}~SUB-DRS~DRS-MANY`)).objects.map((o) => o.id);
      const bigUrl = (await post(`/objects/${big.id}/access/https`, { passports })).body
        .url as string;
      const offloaded = await timePost(
        `${offload.url}/ga4gh/drs/v1/objects/${big.id}/access/https`,
        JSON.stringify({ passports }),
      );
      if (offloaded.status !== 200) throw new Error(`offloaded access URL: ${offloaded.status}`);
      const offloadUrl = (JSON.parse(offloaded.body.toString()) as { url: string }).url;
      // Before the byte reads: curl runs blocking, and a kept-alive connection would go stale.
      for (let round = 0; round < bulkRounds; round++) {
        const r = await post('/objects', { bulk_object_ids: many, passports });
        const resolved = (r.body.summary as { resolved: number }).resolved;
        if (resolved !== many.length) throw new Error(`bulk resolved ${resolved}`);
        bulk.push(r.ms);
      }
      const nginxUrl = `${nginx.url}/projects/${PROJECT}/SUB-DRS/data/raw/DRS-BIG/${big.path}`;
      // The import wrote the file past the page cache: one untimed read each puts it there, so
      // every server reads it from memory.
      curlSpeed(nginxUrl);
      curlSpeed(bigUrl);
      curlSpeed(offloadUrl);
      for (let round = 0; round < rounds; round++) {
        loads.push(loadavg()[0]);
        // Interleaved: a change of the machine's load during the run falls on all three alike.
        whole.push({
          drs: curlSpeed(bigUrl),
          offload: curlSpeed(offloadUrl),
          nginx: curlSpeed(nginxUrl),
        });
        const start = (round * 7 * rangeBytes) % (bigBytes - rangeBytes);
        const range = `${start}-${start + rangeBytes - 1}`;
        ranged.push({
          drs: curlSpeed(bigUrl, range),
          offload: curlSpeed(offloadUrl, range),
          nginx: curlSpeed(nginxUrl, range),
        });
      }
      loads.push(loadavg()[0]);
      apiMemoryMiB = processMemory(api.child.pid!, 'VmHWM') / MiB;
    } finally {
      await offload.stop();
      await offloadApi.stop();
      await nginx.stop();
      await worker.stop();
      await api.stop();
    }
  } finally {
    await catalog.stop();
    await redis.stop();
    await catalogDb.database.drop();
  }
  const mbs = (bytesPerSecond: number) => fmt(bytesPerSecond / 1e6, 0);
  const med = (rows: Speeds[], who: keyof Speeds) => median(rows.map((r) => r[who]));
  const ratio = (rows: Speeds[], who: keyof Speeds) => med(rows, who) / med(rows, 'nginx');
  const size = (bytes: number) =>
    bytes >= 1024 * MiB ? `${bytes / 1024 / MiB} GiB` : `${bytes / MiB} MiB`;
  const wholeRatio = ratio(whole, 'drs');
  const rangeRatio = ratio(ranged, 'drs');
  const wholeOffload = ratio(whole, 'offload');
  const rangeOffload = ratio(ranged, 'offload');
  const p99 = percentile(bulk, 99);
  // Met when bytes are served at the target in at least one supported set-up: the API alone
  // or the API offloaded (DRS_BYTES_OFFLOAD=nginx, the set-up for throughput).
  const bytesMet = (a: number, b: number) => a >= THROUGHPUT_TARGET && b >= THROUGHPUT_TARGET;
  const met =
    (bytesMet(wholeRatio, rangeRatio) || bytesMet(wholeOffload, rangeOffload)) &&
    p99 < BULK_TARGET_MS;
  const load = `${fmt(Math.min(...loads), 1)}–${fmt(Math.max(...loads), 1)}`;
  ctx.log(
    `DRS: API alone whole ${fmt(wholeRatio, 2)}× nginx, ranges ${fmt(rangeRatio, 2)}×; offloaded whole ${fmt(wholeOffload, 2)}×, ranges ${fmt(rangeOffload, 2)}×; bulk p99 ${fmt(p99, 0)} ms; load average ${load}`,
  );
  const row = (label: string, rows: Speeds[]) => [
    label,
    mbs(med(rows, 'nginx')),
    mbs(med(rows, 'drs')),
    fmt(ratio(rows, 'drs'), 2),
    mbs(med(rows, 'offload')),
    fmt(ratio(rows, 'offload'), 2),
  ];
  const markdown = [
    '## DRS (GA4GH 1.5)',
    '',
    `A ${size(bigBytes)} stored file read through its DRS access URL, curl as the client (body to /dev/null):`,
    'nginx (Debian) alone serving the same file with `sendfile`; the built provisioner API sending it',
    'itself (`DRS_BYTES_OFFLOAD=off`); and a second API process checking the access URL and handing',
    'the bytes to nginx (`DRS_BYTES_OFFLOAD=nginx`, deploy/nginx/drs-offload.conf.template).',
    `Interleaved rounds, medians: the whole file ${rounds} times and ${rounds} ranges of ${size(rangeBytes)}.`,
    `Then one bulk \`POST /objects\` for ${manyFiles} objects with the catalog's visas as the passport,`,
    `${bulkRounds} times (the grant check's answer is reused for \`DRS_GRANT_CHECK_SECONDS\`, as in production).`,
    `Targets: ≥ ${THROUGHPUT_TARGET}× nginx, whole and ranged (alone or offloaded); bulk p99 < ${BULK_TARGET_MS} ms.${ctx.quick ? ' **Quick mode: not a real figure.**' : ''}`,
    `Load average (1 min) during the byte rounds: ${load}.`,
    '',
    table(
      ['read', 'nginx MB/s', 'API MB/s', 'API ÷ nginx', 'offloaded MB/s', 'offloaded ÷ nginx'],
      [row('whole file', whole), row(`${size(rangeBytes)} ranges`, ranged)],
    ),
    '',
    table(
      ['bulk request', 'median ms', 'p99 ms', 'max ms'],
      [[`${manyFiles} objects`, fmt(median(bulk), 1), fmt(p99, 1), fmt(Math.max(...bulk), 1)]],
    ),
    '',
    `API process peak RSS (VmHWM): ${fmt(apiMemoryMiB, 0)} MiB. Targets ${verdict(met)}.`,
  ].join('\n');
  return { name: 'drs', title: 'DRS', markdown, targetsMet: met };
}
