// A rolling update under load: two catalog-api replicas of release N-1 behind HAProxy, replaced
// one by one by release N as a Deployment with maxSurge 1 and maxUnavailable 0 does it (a new
// replica, Ready; the old one terminated as the kubelet does, with its preStop pause and grace
// period; the next), then replaced again by N with a changed setting (a new ConfigMap rolls the
// pods: N's own shutdown under load), while a client sends reads, REMS grant deliveries and
// catalog imports through the balancer. Nothing may fail: 0 failed requests, every grant
// delivered shows in the person's permissions, every import is in the catalog once, and each
// replaced replica exits 0 within its grace period. The schema is N's already (the migration
// Job runs first), so release N-1 serves on schema N here too.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CatalogReplica, catalogManifest, LoadBalancer } from './catalog-replicas.mjs';
import { request } from './fixtures.mjs';
import { webhookEnv } from './previous-release.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, fn, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn().catch(() => false)) return;
    await sleep(250);
  }
  throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
}

/** One request on the loop's own keep-alive connection; resolves {status, text}. */
const send = (agent, url, options = {}) => request(url, { ...options, agent, timeoutMs: 30_000 });

/**
 * The client: three readers, one REMS, one importer, each a loop on a keep-alive connection of
 * its own, paced so that the replicas are busy but not saturated (their probes must answer).
 */
function startLoad({ url, globalKey, accession, oidc, tag }) {
  const stats = { requests: 0, slowestMs: 0, failed: [], grants: [], imports: [] };
  const agents = [];
  let running = true;
  const key = { 'X-API-Key': globalKey };
  async function one(agent, path, options, ok) {
    const started = performance.now();
    try {
      const answer = await send(agent, `${url}${path}`, options);
      stats.slowestMs = Math.max(stats.slowestMs, performance.now() - started);
      if (!ok(answer)) {
        stats.failed.push(
          `${options.method ?? 'GET'} ${path}: ${answer.status} ${answer.text.slice(0, 160)}`,
        );
        return null;
      }
      return answer;
    } catch (error) {
      stats.failed.push(`${options.method ?? 'GET'} ${path}: ${error.message}`);
      return null;
    } finally {
      stats.requests += 1;
    }
  }
  function loop(pauseMs, step) {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    return (async () => {
      for (let n = 1; running; n++) {
        await step(agent, n);
        await sleep(pauseMs);
      }
    })();
  }
  const reads = [
    '/api/datasets',
    '/api/projects',
    '/api/partners',
    '/api/cohorts',
    '/api/termsearch/disease?search=diab&page=1',
    `/api/permissions/${encodeURIComponent(oidc)}`,
  ];
  const is200 = (a) => a.status === 200;
  const loops = [0, 1, 2].map((r) =>
    loop(20, (agent, n) => one(agent, reads[(n + r * 2) % reads.length], { headers: key }, is200)),
  );
  loops.push(
    loop(100, async (agent, n) => {
      const user = `rolling-${tag}-${n}`;
      const body = [
        { application: n, resource: accession, user, mail: `${user}@example.org`, end: null },
      ];
      const answer = await one(agent, '/api/accessreq', { method: 'POST', body }, is200);
      if (answer) stats.grants.push(user);
    }),
    loop(100, async (agent, n) => {
      const name = `Rolling partner ${tag} ${n}`;
      const answer = await one(
        agent,
        '/api/partners',
        { method: 'POST', headers: key, body: { items: [{ name }] } },
        is200,
      );
      if (answer) stats.imports.push(name);
    }),
  );
  return {
    stats,
    async stop() {
      running = false;
      await Promise.all(loops);
      for (const agent of agents) agent.destroy();
      return stats;
    },
  };
}

/**
 * @param {object} o stack; envFile (the catalog's); oldImage, newImage; haproxyImage; port (the
 *   balancer's, in the pod) and url (where this process reaches it); globalKey; accession (a
 *   dataset REMS grants); oidc (a person whose permissions are read); psql(sql) on the catalog
 */
export async function rollingUpdate(o) {
  const manifest = catalogManifest();
  const dir = mkdtempSync(join(tmpdir(), 'rds-lb-'));
  chmodSync(dir, 0o777); // the balancer runs as uid 1000 and makes its socket here
  const slots = { r0: 3100, r1: 3101, r2: 3102, r3: 3103, r4: 3104, r5: 3105 };
  const lb = new LoadBalancer({
    stack: o.stack,
    image: o.haproxyImage,
    port: o.port,
    slots,
    socketDir: dir,
    readiness: manifest.readiness,
  });
  const replica = (slot, image, settings = {}) =>
    new CatalogReplica({
      stack: o.stack,
      image,
      envFile: o.envFile,
      port: slots[slot],
      name: `catalog-${slot}`,
      // REMS reaches the replicas through the balancer, on the pod's loopback.
      env: { ...webhookEnv('127.0.0.1/32'), ...settings },
    });
  const old = [replica('r0', o.oldImage), replica('r1', o.oldImage)];
  const fresh = [replica('r2', o.newImage), replica('r3', o.newImage)];
  const changed = [
    replica('r4', o.newImage, { LOG_LEVEL: 'warn' }),
    replica('r5', o.newImage, { LOG_LEVEL: 'warn' }),
  ];
  const all = [...old, ...fresh, ...changed];
  const slotOf = (r) => Object.keys(slots).find((slot) => r.port === slots[slot]);
  /** maxSurge 1, maxUnavailable 0: a new replica, Ready; then an old one goes, the next comes. */
  async function roll(from, to) {
    await to[0].start();
    await until('a new replica Ready', () => states({ [slotOf(to[0])]: 'up' }), 180_000);
    const firstEnd = from[0].terminate(() => lb.drain(slotOf(from[0])));
    await to[1].start();
    await until('the second new replica Ready', () => states({ [slotOf(to[1])]: 'up' }), 180_000);
    return Promise.all([firstEnd, from[1].terminate(() => lb.drain(slotOf(from[1])))]);
  }
  const states = async (want) => {
    const now = await lb.states();
    return Object.entries(want).every(([slot, state]) => now[slot] === state);
  };
  let load;
  try {
    const config = join(dir, 'haproxy.cfg');
    writeFileSync(config, lb.config(), { mode: 0o644 });
    await lb.start(config);
    await Promise.all(old.map((r) => r.start()));
    await until(
      'two replicas of the previous release in the balancer',
      () => states({ r0: 'up', r1: 'up', r2: 'down', r3: 'down', r4: 'down', r5: 'down' }),
      180_000,
    );
    load = startLoad({ ...o, tag: Date.now().toString(36) });
    await until('the load under way', async () => load.stats.requests >= 100, 60_000);
    const ends = [...(await roll(old, fresh)), ...(await roll(fresh, changed))];
    // A moment on the last replicas alone.
    const at = load.stats.requests;
    await until('requests to the new release', async () => load.stats.requests >= at + 50, 60_000);
    const stats = await load.stop();
    load = undefined;

    assert.deepEqual(stats.failed.slice(0, 5), [], `${stats.failed.length} requests failed`);
    for (const [i, end] of ends.entries()) {
      assert.equal(end.oomKilled, false, `replaced replica ${i} was OOM-killed`);
      assert.equal(end.exitCode, 0, `replaced replica ${i} exited ${end.exitCode}`);
      assert.ok(end.ms < manifest.graceSeconds * 1000, `replaced replica ${i} took ${end.ms} ms`);
    }
    assert.ok(stats.grants.length > 0 && stats.imports.length > 0, 'no grant or import was sent');
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (const user of stats.grants) {
        const { status, text } = await send(
          agent,
          `${o.url}/api/permissions/${encodeURIComponent(user)}`,
          { headers: { 'X-API-Key': o.globalKey } },
        );
        assert.ok(status === 200 && text.includes(o.accession), `grant to ${user} lost: ${text}`);
      }
    } finally {
      agent.destroy();
    }
    const names = stats.imports.map((n) => `'${n}'`).join(',');
    const counts = o
      .psql(`SELECT count(*) || ' ' || count(DISTINCT name) FROM partners WHERE name IN (${names})`)
      .split(' ')
      .map(Number);
    assert.deepEqual(counts, [stats.imports.length, stats.imports.length], 'imports not each once');
    const n = (x) => x.toLocaleString('en-US');
    return (
      `${n(stats.requests)} requests, ${stats.failed.length} failed, slowest ${Math.round(stats.slowestMs)} ms; ` +
      `${n(stats.grants.length)} grants and ${n(stats.imports.length)} imports, each once; ` +
      `N-1 -> N, then a settings change: replicas ended (exit 0) after ` +
      `${ends.map((e) => (e.ms / 1000).toFixed(1)).join(', ')} s (grace ${manifest.graceSeconds} s)`
    );
  } catch (error) {
    // Each replica's last lines, and its last warnings and errors (the catalog logs the cause of
    // every 503 as "dependency unavailable"), so that a failure names which replica and why.
    const tails = await Promise.all(
      all.map(async (r) => {
        const lines = (await r.logs(5000)).split('\n');
        const warned = lines.filter((l) => /"level":(40|50|60)\b/.test(l)).slice(-5);
        return [
          `${r.container}: ${lines.slice(-3).join('\n').slice(-400)}`,
          ...warned.map((l) => `  ${l.slice(0, 800)}`),
        ].join('\n');
      }),
    );
    error.message += `\n${JSON.stringify(await lb.states().catch(() => ({})))}\n${tails.join('\n')}`;
    throw error;
  } finally {
    await load?.stop();
    await Promise.all(all.map((r) => r.destroy()));
    await lb.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}
