import { prng } from '../../lib/prng';
import { generateTerms } from '../data/term-data';
import { withClient } from '../lib/bench-database';
import { migratedCatalogDatabase, startCatalog } from '../lib/catalog-process';
import type { BenchContext } from '../lib/context';
import { measure, timeGet } from '../lib/http-load';
import { fmt, percentile, SuiteReport, table, verdict } from '../lib/report';

const P99_TARGET_MS = 50;
const CONNECTIONS = 4;
/** Never-asked searches per full run: about 10 s of load at the rates measured so far. */
const NEW_SEARCHES = 6_000;

const searchPath = (search: string, page = 1) =>
  `/api/termsearch/disease?search=${encodeURIComponent(search)}&page=${page}`;

/** Searches a person typing into the form would send: short, common, rare, exact, deep pages. */
function searchMix(samples: string[], quick: boolean): { label: string; path: string }[] {
  const exact = samples[0] ?? 'syndrome';
  return [
    { label: '`e` (matches most terms)', path: searchPath('e') },
    { label: '`a`, page 40', path: searchPath('a', 40) },
    { label: '`in`', path: searchPath('in') },
    { label: '`syn`', path: searchPath('syn') },
    { label: '`syndrome`', path: searchPath('syndrome') },
    { label: '`parkinson`', path: searchPath('parkinson') },
    // The quick run's 10,000 terms hold fewer than three pages of "disease".
    { label: `\`disease\`, page ${quick ? 1 : 3}`, path: searchPath('disease', quick ? 1 : 3) },
    { label: '`ic ac` (spans words)', path: searchPath('ic ac') },
    { label: 'an existing label (exact)', path: searchPath(exact) },
    { label: '`q` (rare, 1 letter)', path: searchPath('q') },
    { label: '`zq` (rare, 2 letters)', path: searchPath('zq') },
    { label: '`xyzzy` (no match)', path: searchPath('xyzzy') },
    { label: '`100%_\\` (LIKE metacharacters)', path: searchPath('100%_\\') },
  ];
}

/**
 * Searches nobody asked before, as people typing would send them: pieces of real labels of
 * 1–12 characters (short ones more often), a few whole labels, pages 1–3 of single characters.
 * Each appears once.
 */
export function newSearches(labels: string[], count: number): string[] {
  // Seeded: every run asks the same "new" searches.
  const next = prng(42);
  const seen = new Set<string>();
  const paths: string[] = [];
  while (paths.length < count) {
    const label = labels[Math.floor(next() * labels.length)].toLowerCase();
    const whole = next() < 0.05;
    const length = whole ? label.length : 1 + Math.floor(next() ** 2 * 12);
    const start = whole ? 0 : Math.floor(next() * Math.max(1, label.length - length));
    const search = label.slice(start, start + length);
    // Deeper pages only for single characters, which match thousands of labels (no 400s).
    const page = length === 1 ? 1 + Math.floor(next() * 3) : 1;
    const path = searchPath(search, page);
    if (search.trim() === '' || seen.has(path)) continue;
    seen.add(path);
    paths.push(path);
  }
  return paths;
}

export async function termsBench(ctx: BenchContext): Promise<SuiteReport> {
  const count = ctx.quick ? 10_000 : 100_000;
  const seconds = ctx.quick ? 3 : 10;
  const repetitions = ctx.quick ? 5 : 30;
  const catalog = await migratedCatalogDatabase();
  try {
    const samples = await withClient(catalog.database.url, (c) => generateTerms(c, 'disease', count));
    ctx.log(`generated ${count} terms`);
    const app = await startCatalog(catalog.env);
    try {
      const mix = searchMix(samples, ctx.quick);
      // One sequential client per search: the latency of each query alone.
      const single: { label: string; first: number; p50: number; p99: number; results: number }[] = [];
      for (const { label, path } of mix) {
        const times: number[] = [];
        let results = 0;
        let first = 0;
        for (let i = 0; i < repetitions + 2; i++) {
          const r = await timeGet(app.url + path);
          if (r.status !== 200) throw new Error(`${path} answered ${r.status}: ${r.body.toString()}`);
          results = (JSON.parse(r.body.toString()) as { results: unknown[] }).results.length;
          if (i === 0) first = r.ms;
          if (i >= 2) times.push(r.ms);
        }
        single.push({ label, first, p50: percentile(times, 50), p99: percentile(times, 99), results });
      }
      const load = await measure({
        url: app.url,
        paths: mix.map((m) => m.path),
        connections: CONNECTIONS,
        durationSeconds: seconds,
      });
      ctx.log(`mix: ${fmt(load.requestsPerSecond)} req/s, p50 ${load.p50Ms} ms, p99 ${load.p99Ms} ms`);
      // Every request a search never asked before: nothing can come from a cache.
      const labels = await withClient(catalog.database.url, async (c) =>
        (await c.query<{ label: string }>(`SELECT label FROM terms ORDER BY md5(term_id) LIMIT 5000`)).rows.map((r) => r.label),
      );
      // A fixed number, so every run asks the same searches (and at most once each).
      const fresh = newSearches(labels, ctx.quick ? 1_000 : NEW_SEARCHES);
      const cold = await measure({ url: app.url, uniquePaths: fresh, connections: CONNECTIONS });
      if (cold.requests !== fresh.length) throw new Error(`${cold.requests} requests for ${fresh.length} distinct searches`);
      ctx.log(`new searches: ${fmt(cold.requestsPerSecond)} req/s, p50 ${cold.p50Ms} ms, p99 ${cold.p99Ms} ms`);
      const ok = load.p99Ms < P99_TARGET_MS && load.failures === 0 && cold.p99Ms < P99_TARGET_MS && cold.failures === 0;
      const markdown = [
        '## Term search',
        '',
        `${count.toLocaleString('en')} terms in one category (labels of 2–5 words drawn from the shipped DOID/HPO`,
        'labels), the worst case: every search runs over all of them.',
        `Target: p99 < ${P99_TARGET_MS} ms.${ctx.quick ? ' **Quick mode: not a real figure.**' : ''}`,
        '',
        `Two loads, autocannon with ${CONNECTIONS} connections (the repeated mix for ${seconds} s, the new searches until each has been asked once); the target holds for both:`,
        '',
        table(
          ['load', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'p99 < 50 ms'],
          [
            ['**repeated**: the searches below in turn (answered from the response caches after their first time)', fmt(load.requestsPerSecond), fmt(load.p50Ms), `**${fmt(load.p99Ms)}**`, load.failures, verdict(load.p99Ms < P99_TARGET_MS)],
            [`**new**: ${cold.requests.toLocaleString('en')} searches never asked before (pieces of real labels, 1–12 characters, a few whole labels, pages 1–3 of single characters), none from a cache`, fmt(cold.requestsPerSecond), fmt(cold.p50Ms), `**${fmt(cold.p99Ms)}**`, cold.failures, verdict(cold.p99Ms < P99_TARGET_MS)],
          ],
        ),
        '',
        `Target: ${verdict(ok)}.`,
        '',
        `Each search alone (one client; client-side time incl. HTTP): the first request (nothing cached), then ${repetitions} more after one warm-up:`,
        '',
        table(
          ['search', 'results on the page', 'first ms', 'repeated p50 ms', 'repeated p99 ms'],
          single.map((s) => [s.label, s.results, fmt(s.first), fmt(s.p50), fmt(s.p99)]),
        ),
      ].join('\n');
      return { name: 'terms', title: 'Term search', markdown, targetsMet: ok };
    } finally {
      await app.stop();
    }
  } finally {
    await catalog.database.drop();
  }
}
