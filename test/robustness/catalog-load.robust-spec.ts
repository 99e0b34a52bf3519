import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadDemoData } from '../../apps/catalog-api/src/demo/demo-data-loader';
import { DEMO_KEYS, KEYS } from '../../apps/catalog-api/test/demo-catalog.fixture';
import { CatalogTestApp, startCatalogApp } from '../support/catalog-app';
import { sleep } from './support/load-loop';

// A minute of readers against a writer; ROBUSTNESS_LOAD_MS sets another length (e.g. a quick local run).
const DURATION_MS = Number(process.env.ROBUSTNESS_LOAD_MS ?? 60_000);
const READERS = 6;
const MARKER = 'Robustness load partner';

interface Read {
  start: number;
  end: number;
  status: number;
  /** Whether the marker partner was in the published list; undefined for other paths. */
  sawMarker?: boolean;
}

interface Write {
  start: number;
  end: number;
  status: number;
  published: boolean;
}

/**
 * Readers hammer the cached read endpoints (every key kind) while a writer publishes and
 * unpublishes a partner through the admin API. No request may fail, and a read that starts after
 * a write has answered must see that write: the response cache must never serve the old state.
 */
describe('catalog-api under concurrent readers and a writer', () => {
  let t: CatalogTestApp;
  let base: string;
  let partnerId: number;

  beforeAll(async () => {
    t = await startCatalogApp();
    await loadDemoData(t.app, DEMO_KEYS);
    const [row] = await t.dataSource.query<{ id: number }[]>(
      `INSERT INTO partners (name, acronym, is_published) VALUES ($1, 'RLP', false) RETURNING id`,
      [MARKER],
    );
    partnerId = row.id;
    const server = t.app.getHttpServer() as Server;
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => t.close());

  it('answers every request and never serves a state older than the last completed write', async () => {
    const deadline = Date.now() + DURATION_MS;
    const reads: Read[] = [];
    const writes: Write[] = [];
    const readPaths: [string, string | undefined][] = [
      ['/api/partners', undefined],
      ['/api/partners?published=true', KEYS.global],
      ['/api/datasets', KEYS.custodian],
      ['/api/projects', KEYS.catalogEndpoint],
      ['/api/contracts', KEYS.steward],
      ['/api/cohorts', undefined],
    ];
    const reader = async (offset: number) => {
      for (let i = offset; Date.now() < deadline; i++) {
        const [path, key] = readPaths[i % readPaths.length];
        const start = performance.now();
        const res = await fetch(base + path, { headers: key ? { 'X-API-Key': key } : {} });
        const body = await res.text();
        const read: Read = { start, end: performance.now(), status: res.status };
        if (path.startsWith('/api/partners') && res.status === 200) {
          read.sawMarker = (JSON.parse(body) as { results: { name: string }[] }).results.some((p) => p.name === MARKER);
        }
        reads.push(read);
      }
    };
    const writer = async () => {
      for (let published = true; Date.now() < deadline; published = !published) {
        const start = performance.now();
        const res = await fetch(`${base}/api/admin/partners/${partnerId}/${published ? 'publish' : 'unpublish'}`, {
          method: 'POST',
          headers: { 'X-API-Key': KEYS.global },
        });
        await res.arrayBuffer();
        writes.push({ start, end: performance.now(), status: res.status, published });
        // Quiet time between writes, so that many reads fall entirely between two of them.
        await sleep(150);
      }
    };
    await Promise.all([writer(), ...Array.from({ length: READERS }, (_, i) => reader(i))]);

    // A read that started after write k answered and ended before write k+1 began must show k.
    const stale: string[] = [];
    let checked = 0;
    for (const read of reads) {
      if (read.sawMarker === undefined) continue;
      const k = writes.findLastIndex((w) => w.end < read.start);
      if (k === -1) continue;
      const next = writes[k + 1];
      if (next && next.start < read.end) continue;
      checked++;
      if (read.sawMarker !== writes[k].published) {
        stale.push(`read at ${read.start.toFixed(0)} ms saw published=${read.sawMarker} after write ${k} (published=${writes[k].published}) ended at ${writes[k].end.toFixed(0)} ms`);
      }
    }
    process.stdout.write(
      `catalog load: ${reads.length} reads by ${READERS} readers and ${writes.length} writes in ${DURATION_MS / 1000} s; ` +
        `${checked} reads checked for staleness\n`,
    );
    expect(reads.filter((r) => r.status !== 200).map((r) => r.status)).toEqual([]);
    expect(writes.filter((w) => w.status !== 200).map((w) => w.status)).toEqual([]);
    expect(writes.length).toBeGreaterThan(10);
    expect(checked).toBeGreaterThan(100);
    expect(stale).toEqual([]);
  });
});
