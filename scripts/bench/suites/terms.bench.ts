import { generateTerms } from '../data/term-data';
import { withClient } from '../lib/bench-database';
import { migratedCatalogDatabase, startCatalog } from '../lib/catalog-process';
import type { BenchContext } from '../lib/context';
import { measure, timeGet } from '../lib/http-load';
import { fmt, percentile, SuiteReport, table, verdict } from '../lib/report';

const P99_TARGET_MS = 50;
const CONNECTIONS = 4;

/** Searches a person typing into the form would send: short, common, rare, exact, deep pages. */
function searchMix(samples: string[]): { label: string; path: string }[] {
  const q = (search: string, page = 1) =>
    `/api/termsearch/disease?search=${encodeURIComponent(search)}&page=${page}`;
  const exact = samples[0] ?? 'syndrome';
  return [
    { label: '`e` (matches most terms)', path: q('e') },
    { label: '`a`, page 40', path: q('a', 40) },
    { label: '`in`', path: q('in') },
    { label: '`syn`', path: q('syn') },
    { label: '`syndrome`', path: q('syndrome') },
    { label: '`parkinson`', path: q('parkinson') },
    { label: '`disease`, page 3', path: q('disease', 3) },
    { label: '`ic ac` (spans words)', path: q('ic ac') },
    { label: 'an existing label (exact)', path: q(exact) },
    { label: '`q` (rare, 1 letter)', path: q('q') },
    { label: '`zq` (rare, 2 letters)', path: q('zq') },
    { label: '`xyzzy` (no match)', path: q('xyzzy') },
    { label: '`100%_\\` (LIKE metacharacters)', path: q('100%_\\') },
  ];
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
      const mix = searchMix(samples);
      // One sequential client per search: the latency of each query alone.
      const single: { label: string; p50: number; p99: number; results: number }[] = [];
      for (const { label, path } of mix) {
        const times: number[] = [];
        let results = 0;
        for (let i = 0; i < repetitions + 2; i++) {
          const r = await timeGet(app.url + path);
          if (r.status !== 200) throw new Error(`${path} answered ${r.status}: ${r.body.toString()}`);
          results = (JSON.parse(r.body.toString()) as { results: unknown[] }).results.length;
          if (i >= 2) times.push(r.ms); // the first two warm the plan cache and the connection
        }
        single.push({ label, p50: percentile(times, 50), p99: percentile(times, 99), results });
      }
      const load = await measure({
        url: app.url,
        paths: mix.map((m) => m.path),
        connections: CONNECTIONS,
        durationSeconds: seconds,
      });
      ctx.log(`mix: ${fmt(load.requestsPerSecond)} req/s, p50 ${load.p50Ms} ms, p99 ${load.p99Ms} ms`);
      const ok = load.p99Ms < P99_TARGET_MS && load.failures === 0;
      const markdown = [
        '## Term search',
        '',
        `${count.toLocaleString('en')} terms in one category (labels of 2–5 words drawn from the shipped DOID/HPO`,
        'labels), the worst case: every search runs over all of them.',
        `Target: p99 < ${P99_TARGET_MS} ms.${ctx.quick ? ' **Quick mode: not a real figure.**' : ''}`,
        '',
        `**Mixed load** (autocannon, ${CONNECTIONS} connections, ${seconds} s, the searches below in turn):`,
        `${fmt(load.requestsPerSecond)} req/s, p50 ${fmt(load.p50Ms)} ms, **p99 ${fmt(load.p99Ms)} ms**, ${load.failures} errors: target ${verdict(ok)}.`,
        '',
        `Each search alone (one client, ${repetitions} requests after two warm-ups; client-side time incl. HTTP):`,
        '',
        table(
          ['search', 'results on the page', 'p50 ms', 'p99 ms'],
          single.map((s) => [s.label, s.results, fmt(s.p50), fmt(s.p99)]),
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
