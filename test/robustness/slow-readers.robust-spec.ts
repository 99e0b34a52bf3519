import { connect, type Socket } from 'node:net';
import { DataSource } from 'typeorm';
import { CatalogSettings } from '../../apps/catalog-api/src/config/catalog.settings';
import { generateSyntheticCatalog } from '../../apps/catalog-api/src/demo/synthetic-catalog';
import { buildTypeOrmOptions } from '../../apps/catalog-api/src/typeorm-options';
import { KEYS, loadDemoCatalog } from '../../apps/catalog-api/test/demo-catalog.fixture';
import { processMemory } from '../../scripts/lib/child-process';
import { deployedMemoryLimit, deployedNodeArgs } from '../../scripts/lib/deployed-node-args';
import { AppProcess, entryCommand } from '../support/app-process';
import { createCatalogDatabase } from '../support/databases';
import { metricSample } from '../support/prometheus-text';
import { until } from '../support/wait';
import { startCatalogProcess } from './support/catalog-process';

const MiB = 1024 * 1024;
/** Slow readers from this many client addresses, each asking several large answers. */
const CLIENTS = 40;
const PER_CLIENT = 4;
/** Of the pod's memory limit: the line every process stays under in every hostile class. */
const MEMORY_SHARE = 0.75;
/** Shorter than the default (30 s) to keep the file short: a stalled answer is cut one to two of these after its last byte taken. */
const STALL_MS = 10_000;

/** Every kind of large streamed answer: a DCAT page in three formats (a key and none), the JSON list. */
const PATHS = ['/api/dcat', '/api/dcat?format=jsonld', '/api/dcat?format=rdf', '/api/datasets'];

/**
 * Clients that ask for large answers and stop reading, against the built catalog as deployed:
 * 40 addresses (through a trusted proxy) × 4 requests, 160 in all against a pool of 10
 * connections. Readiness answers throughout (the pages' reads take at most half the pool and no
 * answer holds a connection while it is sent), at most SLOW_READERS_MAX answers are admitted,
 * holding at most DCAT_HELD_DATASETS_MAX datasets' facts, and the rest refused at once, the
 * resident set stays under 75 % of the pod's limit, and every stalled answer is cut after
 * SLOW_READER_TIMEOUT_MS.
 */
describe('catalog-api under slow readers', () => {
  let app: AppProcess;
  let url: string;
  let port: number;
  const sockets: Socket[] = [];
  const defaults = new CatalogSettings();

  beforeAll(async () => {
    const databaseUrl = await createCatalogDatabase();
    await loadDemoCatalog(databaseUrl);
    const dataSource = new DataSource(
      buildTypeOrmOptions({ DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: 2 }),
    );
    await dataSource.initialize();
    // 1,200 synthetic datasets with 8 KB descriptions (one DCAT page of 15-20 MB) and 60 with
    // 64 KB descriptions (a JSON list of 16 MB): each answer well over what a stopped socket
    // absorbs on loopback (the receiver's buffer grows to tcp_rmem's 6 MB, the sender's to 4 MB;
    // a 5 MB Turtle page was once taken whole and never stalled).
    await generateSyntheticCatalog(dataSource, { datasets: 1200 });
    await dataSource.query(
      `UPDATE datasets SET description = coalesce(description, '') || repeat(md5(id::text), 256)`,
    );
    await dataSource.query(`INSERT INTO datasets (title, description)
      SELECT 'Big dataset ' || g, repeat(md5(g::text), 2000) FROM generate_series(1, 60) g`);
    await dataSource.destroy();
    ({ app, port, url } = await startCatalogProcess(
      databaseUrl,
      {
        DCAT_PUBLISHER_NAME: 'Robustness Institute',
        DCAT_PAGE_SIZE: '1200',
        TRUSTED_PROXIES: '127.0.0.1',
        SLOW_READER_TIMEOUT_MS: String(STALL_MS),
      },
      deployedNodeArgs('catalog-api/deployment.yaml'),
    ));
    // Warm: the stored exports rendered once, as on a running replica.
    const warm = await fetch(`${url}/api/datasets`, { headers: { 'X-API-Key': KEYS.global } });
    expect(warm.status).toBe(200);
    await warm.arrayBuffer();
  }, 180_000);
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    app.child.kill('SIGTERM');
    await app.exited;
  });

  const metrics = async () => (await fetch(`${url}/metrics`)).text();
  const sample = async (name: string) => metricSample(await metrics(), name) ?? 0;

  /**
   * Asks `path` as `client` and stops reading after the first bytes: resolves with the status
   * once they arrive (`busy`: the 503 of SLOW_READERS_MAX; `heavy`: DCAT_HELD_DATASETS_MAX's).
   */
  function stall(path: string, client: string, withKey: boolean): Promise<string> {
    const socket = connect(port, '127.0.0.1');
    sockets.push(socket);
    socket.on('error', () => undefined);
    return new Promise((resolve) => {
      socket.once('data', (chunk: Buffer) => {
        socket.pause();
        const head = chunk.toString('latin1');
        const status = /^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 'none';
        if (status === '503' && head.includes('Too many answers')) resolve('busy');
        else if (status === '503' && head.includes('hold too much')) resolve('heavy');
        else resolve(status);
      });
      socket.once('close', () => resolve('closed'));
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: catalog.test\r\nX-Forwarded-For: ${client}\r\n` +
          `${withKey ? `X-API-Key: ${KEYS.global}\r\n` : ''}\r\n`,
      );
    });
  }

  it('holds no connection, keeps health answering, stays within memory and cuts the stalled', async () => {
    const pid = app.child.pid!;
    const started = Date.now();
    // Readiness probed all along, as the kubelet does: the pages' reads never take its pool.
    let asking = true;
    const during: { status: number; ms: number }[] = [];
    const prober = (async () => {
      while (asking) {
        const t = Date.now();
        const { status } = await fetch(`${url}/health/ready`);
        during.push({ status, ms: Date.now() - t });
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    const statuses = await Promise.all(
      Array.from({ length: CLIENTS * PER_CLIENT }, (_, i) =>
        stall(
          PATHS[i % PATHS.length],
          `10.3.${Math.floor(i / PER_CLIENT)}.1`,
          // Some pages anonymously (the published datasets); the JSON list needs a key.
          !PATHS[i % PATHS.length].startsWith('/api/dcat') || i % 3 !== 0,
        ),
      ),
    );
    asking = false;
    await prober;
    const count = (status: string) => statuses.filter((s) => s === status).length;
    const held = await sample('http_responses_sending');
    const heldDatasets = await sample('http_responses_held_weight');
    const probes: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = Date.now();
      expect((await fetch(`${url}/health/ready`)).status).toBe(200);
      probes.push(Date.now() - t);
    }
    const peak = processMemory(pid, 'VmHWM') / MiB;
    await until(
      async () => (await sample('http_responses_sending')) === 0,
      'every stalled answer to be cut',
      2 * STALL_MS + 60_000,
      250,
    );
    const cut = await sample('http_responses_stalled_total');
    const limit = deployedMemoryLimit('catalog-api/deployment.yaml') / MiB;
    const byStatus = Object.fromEntries([...new Set(statuses)].map((s) => [s, count(s)]));
    process.stdout.write(
      `slow readers: ${statuses.length} requests from ${CLIENTS} clients, answered in ` +
        `${Date.now() - started} ms: ${JSON.stringify(byStatus)} (busy: 503 of SLOW_READERS_MAX); ` +
        `${held} held at once after, holding ${heldDatasets} datasets' facts; health/ready ${during.length} times while they came, slowest ` +
        `${Math.max(...during.map((p) => p.ms))} ms, then ${probes.join('/')} ms while held; peak ` +
        `resident ${peak.toFixed(0)} MiB of ${limit} (${MEMORY_SHARE * 100} %: ` +
        `${(limit * MEMORY_SHARE).toFixed(0)}); ${cut} cut\n`,
    );
    expect(during.filter((p) => p.status !== 200)).toEqual([]);
    // At most SLOW_READERS_MAX held at once, holding at most DCAT_HELD_DATASETS_MAX datasets
    // (pages of 1,200 and more: three at most); the others refused, by number or by weight.
    expect(count('200') + count('busy') + count('heavy')).toBe(statuses.length);
    expect(count('heavy')).toBeGreaterThan(0);
    expect(held).toBeLessThanOrEqual(defaults.SLOW_READERS_MAX);
    expect(heldDatasets).toBeGreaterThan(0);
    expect(heldDatasets).toBeLessThanOrEqual(defaults.DCAT_HELD_DATASETS_MAX);
    // None was read to its end: every one admitted is cut.
    expect(cut).toBe(count('200'));
    if (entryCommand('catalog-api', 'src/main').built)
      expect(peak).toBeLessThan(limit * MEMORY_SHARE);
    // Free again: a write, and a full page for one of the slow clients' addresses.
    const write = await fetch(`${url}/api/partners`, {
      method: 'POST',
      headers: { 'X-API-Key': KEYS.global, 'Content-Type': 'application/json' },
      body: JSON.stringify({ items: [{ name: 'Written after the slow readers' }] }),
    });
    expect(write.status).toBe(200);
    const again = await fetch(`${url}/api/dcat`, { headers: { 'X-Forwarded-For': '10.3.0.1' } });
    expect(again.status).toBe(200);
    expect((await again.text()).length).toBeGreaterThan(1_000_000);
  }, 300_000);
});
