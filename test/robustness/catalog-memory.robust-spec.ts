import { CatalogSettings } from '../../apps/catalog-api/src/config/catalog.settings';
import { KEYS, loadDemoCatalog } from '../../apps/catalog-api/test/demo-catalog.fixture';
import { processMemory } from '../../scripts/lib/child-process';
import { deployedNodeArgs } from '../../scripts/lib/deployed-node-args';
import { AppProcess, entryCommand } from '../support/app-process';
import { createCatalogDatabase } from '../support/databases';
import { metricSample } from '../support/prometheus-text';
import { startCatalogProcess } from './support/catalog-process';
import { floodUrls } from './support/url-flood';

// ROBUSTNESS_UNIQUE_URLS sets another number (e.g. a quick local run); the bound is for 200,000.
const UNIQUE_URLS = Number(process.env.ROBUSTNESS_UNIQUE_URLS ?? 200_000);
/**
 * The documented bounds (docs/operations.md, memory): through 200,000 unique URLs the built
 * catalog's resident set stays under RESIDENT_BOUND_MIB, and grows by less than
 * GROWTH_BOUND_MIB over the warmed-up process (what a run from the TypeScript sources checks).
 */
const RESIDENT_BOUND_MIB = 300;
const GROWTH_BOUND_MIB = 160;

/** Resident set and its peak so far of a process, in MiB. */
function memoryOf(pid: number): { rss: number; peak: number } {
  return { rss: processMemory(pid, 'VmRSS') / MiB, peak: processMemory(pid, 'VmHWM') / MiB };
}

const MiB = 1024 * 1024;
const NODE_ARGS = deployedNodeArgs('catalog-api/deployment.yaml');

/**
 * Every kind of URL an anonymous client can make unique: ignored query parameters on the
 * public lists (each a new entry of the fast-read index), term searches (a new entry of both
 * response caches each: 13,000 of 200,000, past the default entry limit; each costs a query),
 * keys in the query string (never cached) and unknown routes (the metrics must not grow a
 * series each), 1,000 of each.
 */
function uniquePath(n: number): string {
  const kind = n % 200;
  if (kind < 13)
    return `/api/termsearch/disease?search=${n.toString(36)}${'q'.repeat(n % 100)}&page=1`;
  if (kind === 13) return `/api/no-such-route/${n}`;
  if (kind === 14) return `/api/partners?API%5FKEY=${KEYS.global}&n=${n}`;
  if (kind % 2 === 0) return `/api/partners?x=${n}`;
  return `/api/cohorts?utm=${n}&ref=${'r'.repeat(n % 500)}`;
}

describe('catalog-api memory under a flood of unique URLs', () => {
  let app: AppProcess;
  let port: number;
  let url: string;
  const defaults = new CatalogSettings();

  beforeAll(async () => {
    const databaseUrl = await createCatalogDatabase();
    await loadDemoCatalog(databaseUrl);
    // Default cache limits, error-level logs (a line per request would measure the logger).
    ({ app, port, url } = await startCatalogProcess(
      databaseUrl,
      {
        // One client pipelining 128 requests measures the caches, not the slow-reader bounds
        // (slow-readers.robust-spec.ts): with them, most of the flood would be refused (429).
        SLOW_READERS_PER_CLIENT: '100000',
        SLOW_READERS_MAX: '100000',
      },
      NODE_ARGS,
    ));
  }, 90_000);
  afterAll(async () => {
    app.child.kill('SIGTERM');
    await app.exited;
  });

  it(`keeps the resident set within its bound over ${UNIQUE_URLS} unique URLs`, async () => {
    const pid = app.child.pid!;
    const built = entryCommand('catalog-api', 'src/main').built;
    // Every kind of path beforehand, so lazy start-up work is part of the baseline.
    await floodUrls(port, (n) => uniquePath(UNIQUE_URLS + n), 2000);
    const before = memoryOf(pid);
    const flood = await floodUrls(port, uniquePath, UNIQUE_URLS);
    const after = memoryOf(pid);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    process.stdout.write(
      `catalog memory: ${flood.answered} unique URLs in ${flood.seconds.toFixed(1)} s ` +
        `(${(flood.answered / flood.seconds).toFixed(0)} req/s, statuses ${JSON.stringify(flood.byStatus)}, ` +
        `${built ? 'built app' : 'TypeScript sources'}, node ${NODE_ARGS.join(' ')}); resident ` +
        `${before.rss.toFixed(0)} MiB warmed up, ${after.rss.toFixed(0)} MiB after, peak ${after.peak.toFixed(0)} MiB\n`,
    );
    expect(flood.answered).toBe(UNIQUE_URLS);
    // Only the unknown routes are not found; everything else answered as usual.
    const notFound = Math.floor((UNIQUE_URLS + 186) / 200);
    expect(flood.byStatus).toEqual({ 200: UNIQUE_URLS - notFound, 404: notFound });
    expect(app.child.exitCode).toBeNull();

    // Each cache at or under both of its limits.
    for (const cache of ['responses', 'fast-reads']) {
      const entries = metricSample(metrics, 'catalog_response_cache_entries', { cache });
      const bytes = metricSample(metrics, 'catalog_response_cache_bytes', { cache });
      expect(entries).toBeGreaterThan(0);
      expect(entries).toBeLessThanOrEqual(defaults.RESPONSE_CACHE_MAX_ENTRIES);
      expect(bytes).toBeLessThanOrEqual(defaults.RESPONSE_CACHE_MAX_BYTES);
    }
    // Request metrics by route template: a handful of series, never one per URL.
    const routes = new Set(
      [...metrics.matchAll(/^http_requests_total\{[^}]*route="([^"]*)"/gm)].map((m) => m[1]),
    );
    expect([...routes].sort()).toEqual(
      expect.arrayContaining([
        '/api/partners',
        '/api/cohorts',
        '/api/termsearch/:category',
        '<unmatched>',
      ]),
    );
    expect(routes.size).toBeLessThan(10);

    expect(after.peak - before.rss).toBeLessThan(GROWTH_BOUND_MIB);
    if (built) expect(after.peak).toBeLessThan(RESIDENT_BOUND_MIB);
    // Sized to the flood: 2,500 answers a second on an idle 2-core machine, a fifth of that when
    // other CPU-bound work shares it.
  }, 600_000);
});
