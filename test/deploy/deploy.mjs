#!/usr/bin/env node
// `npm run test:deploy`: the deployment on a real container engine (podman), as an operator
// runs it (issue 25). One line per check, with its figure; exit 1 when any check fails.
//   upgrade  the compose stack on the image of UPGRADE_FROM_REF (deploy/upgrade-from-ref), with
//            a demo import in it, then on the image of the working tree: migrations once,
//            records and files the same
//   image    size, Node.js, OCI labels, no dev dependencies, no secrets, no .data; every process
//            runs read-only, as uid 1000, with no capabilities, as PID 1, and exits on SIGTERM
//   compose  health-gated start; demo import drop zone -> storage -> catalog -> GET /api/datasets
//   faults   worker killed during an import, Postgres and Redis restarted, the whole stack
//            stopped and started
//   restore  backup.sh and a queue snapshot of the stack with its imports and grants, the stack
//            destroyed, restore.sh into new volumes, `provisioner reregister`: every table,
//            import record, file and registration as before; imports after it once
//            (backup-restore.mjs)
//   drains   2 GiB imports stopped at half by SIGTERM and by SIGKILL, on the volume and on S3
//            (drain.mjs): what was copied again, published and registered once
//   limits   each container's CPU and memory are its manifest's; no OOM kill, no restart
//   drs      the stack with docker-compose.drs.yml (DRS, the nginx offload): the demo
//            researcher's passport, a dataset's DRS object and a file's bytes through nginx,
//            their SHA-256 the stored manifest's (drs-offload.mjs)
//   kube     the dev overlay under `podman kube play`: migration first, pods ready on their own
//            probes, term search without demo data, the demo import; every object of every overlay,
//            environment and component checked against the API types of the Kubernetes release
//            the docs name
//   day two  release N-1 (UPGRADE_FROM_REF) on schema N: its routes answer as before the upgrade
//            (previous-release.mjs); a rolling update from N-1 to N under load behind HAProxy
//            (rolling-update.mjs)
// Set DEPLOY_TESTS=off to skip (one line, exit 0); where podman cannot run, one line and exit 1.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { backupRestoreChecks } from './backup-restore.mjs';
import { drainChecks } from './drain.mjs';
import { drsOffloadChecks } from './drs-offload.mjs';
import { addDataset, request } from './fixtures.mjs';
import { checkAll, KUBERNETES_RELEASE } from './k8s-schemas.mjs';
import { KubePlay } from './kube-play.mjs';
import { termSearchAnswers } from './fresh-deployment.mjs';
import { answersAsBefore, PreviousRelease, recordAnswers, sampleOf } from './previous-release.mjs';
import { rollingUpdate } from './rolling-update.mjs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  buildImage,
  buildImageOfRef,
  ensureBases,
  ensureEnvFiles,
  imageExists,
  imageFacts,
  loadDemo,
} from '../../scripts/deploy/images.mjs';
import {
  inspect,
  podman,
  podmanBlocker,
  podmanEnv,
  ROOT,
  Stack,
} from '../../scripts/deploy/podman-stack.mjs';

const started = Date.now();
const results = [];
const line = (ok, name, figure) => {
  results.push(ok);
  process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${name.padEnd(48)} ${figure}\n`);
};
async function check(name, fn) {
  const t0 = Date.now();
  try {
    const figure = await fn();
    line(true, name, `${figure ?? ''} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  } catch (error) {
    // The first line on the check's line; the rest (an assertion's diff, the replicas' log
    // tails a check appends) under it, so a failure in CI shows its cause.
    const [first, ...rest] = (error instanceof Error ? error.message : String(error)).split('\n');
    line(false, name, first);
    for (const more of rest.slice(0, 120)) process.stdout.write(`     ${more}\n`);
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function freePort() {
  return new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

async function until(what, fn, timeoutMs = 60_000, everyMs = 300) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      const value = await fn();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    await sleep(everyMs);
  }
  throw new Error(`${what}: not within ${timeoutMs / 1000} s${last ? ` (${last.message})` : ''}`);
}

const SERVICES_OF_MANIFESTS = {
  postgres: 'k8s/overlays/dev/postgres.yaml',
  redis: 'k8s/overlays/dev/redis.yaml',
  migrate: 'k8s/base/catalog-api/migrate-job.yaml',
  'catalog-api': 'k8s/base/catalog-api/deployment.yaml',
  'provisioner-api': 'k8s/base/provisioner/api-deployment.yaml',
  'provisioner-worker': 'k8s/base/provisioner/worker-deployment.yaml',
};

/** The first container's limits in a manifest: bytes and CPUs. */
function manifestLimits(file) {
  const docs = parseAllDocuments(readFileSync(join(ROOT, file), 'utf8')).map((d) => d.toJS());
  const workload = docs.find((d) => ['Deployment', 'StatefulSet', 'Job'].includes(d.kind));
  const { limits } = workload.spec.template.spec.containers[0].resources;
  const memory = /^(\d+)(Mi|Gi)$/.exec(limits.memory);
  const cpu = String(limits.cpu).endsWith('m')
    ? parseInt(limits.cpu, 10) / 1000
    : Number(limits.cpu);
  return { memory: Number(memory[1]) * (memory[2] === 'Gi' ? 1 << 30 : 1 << 20), cpus: cpu };
}

function volumePath(stack, volume) {
  return podman(['volume', 'inspect', '--format', '{{.Mountpoint}}', `${stack.project}_${volume}`])
    .stdout;
}

/** Every file under a directory with its SHA-256 (relative paths). */
function digests(dir) {
  const out = {};
  const walk = (sub) => {
    for (const name of readdirSync(join(dir, sub))) {
      const rel = sub ? `${sub}/${name}` : name;
      const stat = statSync(join(dir, rel));
      if (stat.isDirectory()) walk(rel);
      else
        out[rel] = createHash('sha256')
          .update(readFileSync(join(dir, rel)))
          .digest('hex');
    }
  };
  if (existsSync(dir)) walk('');
  return out;
}

class Client {
  constructor(catalog, provisioner, keys) {
    this.catalog = catalog;
    this.provisioner = provisioner;
    this.keys = keys;
  }
  async json(url, { key, method = 'GET', body } = {}) {
    const { status, text } = await request(url, { method, headers: { 'X-API-Key': key }, body });
    if (status < 200 || status > 299)
      throw new Error(`${method} ${url}: ${status} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  }
  datasets(query = '') {
    return this.json(`${this.catalog}/api/datasets${query}`, { key: this.keys.GLOBAL_API_KEY });
  }
  importDataset(id) {
    return this.json(`${this.provisioner}/datasets/dropzone/import`, {
      key: this.keys.PROVISIONER_API_KEY,
      method: 'POST',
      body: { dataset_id: id },
    });
  }
  importRecord(id) {
    return this.json(`${this.provisioner}/imports/${id}`, { key: this.keys.PROVISIONER_API_KEY });
  }
  imports() {
    return this.json(`${this.provisioner}/imports?per_page=100`, {
      key: this.keys.PROVISIONER_API_KEY,
    });
  }
  async ready(base) {
    return (await request(`${base}/health/ready`, { timeoutMs: 3000 })).status === 200;
  }
  /** Imports a dataset of the drop zone and finds it in the catalog: the whole way. */
  async importEndToEnd(datasetId, storageDir) {
    const { id } = await this.importDataset(datasetId);
    const record = await this.waitImported(id);
    const files = storageDir ? Object.keys(digests(join(storageDir, record.path))) : null;
    if (files) assert.ok(files.length > 0, 'no files in storage');
    const listed = await this.datasets(`?elu_accession=${record.catalog.accession}`);
    assert.equal(listed.items.length, 1, 'not in GET /api/datasets');
    return { record, files, dataset: listed.items[0] };
  }
  async waitImported(id, timeoutMs = 120_000) {
    return until(
      `import ${id} registered`,
      async () => {
        const record = await this.importRecord(id);
        if (record.state === 'failed')
          throw new Error(`import ${id} failed: ${JSON.stringify(record.error)}`);
        return record.state === 'imported' && record.catalog?.state === 'registered'
          ? record
          : null;
      },
      timeoutMs,
      500,
    );
  }
}

/** podman arguments running psql on the stack's catalog database. */
const psqlArgs = (stack, ...args) => [
  'exec',
  stack.container('postgres'),
  'psql',
  '-h',
  '/var/run/postgresql',
  '-U',
  'catalog',
  '-d',
  'catalog',
  ...args,
];

function psql(stack, sql) {
  return podman(psqlArgs(stack, '-Atc', sql)).stdout;
}

async function main() {
  if (process.env.DEPLOY_TESTS === 'off') {
    process.stdout.write('test:deploy skipped: DEPLOY_TESTS=off\n');
    return 0;
  }
  const blocker = podmanBlocker();
  if (blocker) {
    process.stdout.write(`test:deploy cannot run: ${blocker} (DEPLOY_TESTS=off skips it)\n`);
    return 1;
  }
  await check(`kubernetes ${KUBERNETES_RELEASE} and CRD types: every object`, async () => {
    const { checked, renders, errors } = await checkAll();
    assert.deepEqual(errors, [], errors.join('; '));
    return `${checked} objects of ${renders.length} renders (overlays, data, components) valid; planted mistakes caught`;
  });
  const ref =
    process.env.UPGRADE_FROM_REF ??
    readFileSync(join(ROOT, 'deploy/upgrade-from-ref'), 'utf8')
      .split('\n')
      .find((l) => l && !l.startsWith('#'))
      .trim();
  const headImage = `localhost/research-data-services:test-head`;
  // The labels' facts of the working tree, taken once: a commit during the run changes HEAD.
  const headFacts = imageFacts('HEAD', { dirty: true });
  const oldImage = `localhost/research-data-services:test-${ref}`;
  let bases;
  await check('bases (official, else local equivalents)', () => {
    bases = ensureBases();
    return Object.values(bases).join(', ');
  });
  if (!bases) return 1;
  // Both images at once: each build spends much of its time in one single-threaded compiler
  // or in npm's downloads, so two side by side share the machine's cores. The working tree's
  // starts first: the ref's begins with blocking git and npm calls. Each line gives its own
  // build's time; the line's time in brackets is how long the run waited for it.
  const timed = async (build) => {
    const t0 = Date.now();
    await build();
    return `built in ${((Date.now() - t0) / 1000).toFixed(1)} s`;
  };
  const headBuild = timed(() => buildImage(headImage, bases.NODE_BASE, { facts: headFacts }));
  const oldBuild = imageExists(oldImage)
    ? Promise.resolve('cached')
    : timed(() => buildImageOfRef(oldImage, bases.NODE_BASE, ref));
  for (const build of [headBuild, oldBuild]) build.catch(() => undefined); // awaited below
  await check(
    `image built from ${ref} (upgrade's start)`,
    async () => `${oldImage}, ${await oldBuild}`,
  );
  await check('image built from the working tree', async () => `${headImage}, ${await headBuild}`);
  // CI starts the main test suite once the builds are over (docs/decisions/ci-stages-overlap.md):
  // what follows waits on containers more than it computes.
  if (process.env.DEPLOY_BUILT_FILE) writeFileSync(process.env.DEPLOY_BUILT_FILE, '');

  const envDir = mkdtempSync(join(tmpdir(), 'rds-deploy-test-'));
  const keys = ensureEnvFiles(envDir);
  const [catalogPort, provisionerPort] = [await freePort(), await freePort()];
  // A port of the pod for what the day-two checks add to it (the previous release alone, then
  // the load balancer), reached here through this published one.
  const [dayTwoPort, dayTwoPublished] = [3200, await freePort()];
  const dayTwoUrl = `http://127.0.0.1:${dayTwoPublished}`;
  const project = `rds-test-${process.pid}`;
  const stackEnv = (image) => ({
    ...process.env,
    ...bases,
    RDS_IMAGE: image,
    COMPOSE_ENV_DIR: envDir,
    CATALOG_PUBLISH: `127.0.0.1:${catalogPort}`,
    PROVISIONER_PUBLISH: `127.0.0.1:${provisionerPort}`,
  });
  const client = new Client(
    `http://127.0.0.1:${catalogPort}`,
    `http://127.0.0.1:${provisionerPort}`,
    keys,
  );
  const publish = [`127.0.0.1:${dayTwoPublished}:${dayTwoPort}`];
  let stack = new Stack({ project, env: stackEnv(oldImage), publish });
  const killed = new Set();
  try {
    // ---- upgrade: the earlier release with data in it -------------------------------------
    let before;
    await check(`compose up on ${ref}'s image, health-gated`, async () => {
      await stack.up();
      return `${Object.keys(stack.services).length} services`;
    });
    await check(`demo import on ${ref}'s image`, async () => {
      loadDemo(stack, envDir);
      const { id } = await client.importDataset('ELX-DS-0001');
      const record = await client.waitImported(id);
      const listed = await client.datasets(`?elu_accession=${record.catalog.accession}`);
      assert.equal(listed.items.length, 1);
      before = {
        accession: record.catalog.accession,
        dataset: listed.items[0],
        migrations: psql(stack, 'SELECT name FROM migrations ORDER BY id'),
        files: digests(volumePath(stack, 'storage')),
      };
      return `${record.catalog.accession}, ${Object.keys(before.files).length} files`;
    });
    const previousRelease = () =>
      new PreviousRelease({
        stack,
        image: oldImage,
        envFile: join(envDir, 'catalog.env'),
        port: dayTwoPort,
        url: dayTwoUrl,
        globalKey: keys.GLOBAL_API_KEY,
        ...sampleOf((sql) => psql(stack, sql)),
      });
    let previousAnswers;
    await check(`release ${ref} on its own schema: answers recorded`, async () => {
      previousAnswers = await recordAnswers(previousRelease());
      return `${Object.keys(previousAnswers.reads).length} reads, ${Object.keys(previousAnswers.webhooks).length} webhook steps`;
    });
    await check("upgrade to the working tree's image", async () => {
      assert.ok(before, 'nothing to upgrade (the earlier step failed)');
      stack.down();
      stack = new Stack({ project, env: stackEnv(headImage), publish });
      await stack.up();
      const migrations = psql(stack, 'SELECT name FROM migrations ORDER BY id');
      const dupes = psql(
        stack,
        'SELECT count(*) FROM (SELECT name FROM migrations GROUP BY name HAVING count(*) > 1) d',
      );
      assert.equal(dupes, '0', 'a migration applied twice');
      assert.ok(migrations.startsWith(before.migrations), 'earlier migrations changed');
      const listed = await client.datasets(`?elu_accession=${before.accession}`);
      assert.deepEqual(listed.items[0], before.dataset, 'the dataset is served differently');
      assert.deepEqual(
        digests(volumePath(stack, 'storage')),
        before.files,
        'imported files changed',
      );
      const added = migrations.split('\n').length - before.migrations.split('\n').length;
      return `${migrations.split('\n').length} migrations (${added} new, each once), record and ${Object.keys(before.files).length} files unchanged`;
    });

    await check(`release N-1 (${ref}) on schema N`, () =>
      answersAsBefore(
        previousRelease(),
        previousAnswers,
        psql(stack, 'SELECT count(*) FROM migrations'),
      ),
    );

    // ---- image -----------------------------------------------------------------------------
    await check('image: size, Node.js, OCI labels, no dev dependencies, no secrets', () => {
      const size = Number(podman(['image', 'inspect', '--format', '{{.Size}}', headImage]).stdout);
      const labels = JSON.parse(
        podman(['image', 'inspect', '--format', '{{json .Labels}}', headImage]).stdout,
      );
      const oci = (name) => labels[`org.opencontainers.image.${name}`];
      assert.deepEqual(
        {
          version: oci('version'),
          revision: oci('revision'),
          created: oci('created'),
          base: oci('base.name'),
        },
        {
          version: headFacts.VERSION,
          revision: headFacts.REVISION,
          created: headFacts.CREATED,
          base: bases.NODE_BASE,
        },
      );
      for (const name of ['title', 'description', 'licenses'])
        assert.ok(oci(name), `no org.opencontainers.image.${name} label`);
      const dockerfileNode = /^ARG NODE_BASE=node:([0-9.]+)-/m.exec(
        readFileSync(join(ROOT, 'Dockerfile'), 'utf8'),
      )[1];
      const devDependencies = Object.keys(
        JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).devDependencies,
      );
      const script = [
        'echo "node:$(node --version)"',
        `for d in ${devDependencies.join(' ')}; do test -e node_modules/$d && echo "dev:$d"; done`,
        'ls -a /app | sed "s/^/app:/"',
        'find / -xdev \\( -name "*.env" -o -name ".env" -o -name npm_ca -o -name ".npmrc" -o -name "*.pem" -o -name "*.key" \\) 2>/dev/null | grep -v -e "^/usr/local/lib/node_modules/npm" -e "^/usr/local/include" -e "^/etc/ssl" -e "^/usr/share" | sed "s/^/secret:/"',
      ].join('; ');
      const probe = podman([
        'run',
        '--rm',
        '--read-only',
        '--user',
        '1000:1000',
        '--entrypoint',
        'sh',
        headImage,
        '-c',
        script,
      ]).stdout.split('\n');
      const node = probe.find((l) => l.startsWith('node:'))?.slice(5);
      assert.equal(node, `v${dockerfileNode}`, "the image's Node.js is not the Dockerfile's");
      const dev = probe.filter((l) => l.startsWith('dev:')).map((l) => l.slice(4));
      assert.deepEqual(dev, [], `dev dependencies in the image: ${dev.join(', ')}`);
      const app = probe
        .filter((l) => l.startsWith('app:'))
        .map((l) => l.slice(4))
        .filter((n) => n !== '.' && n !== '..');
      assert.deepEqual(
        app.sort(),
        ['dist', 'node_modules', 'package-lock.json', 'package.json'],
        `/app holds ${app.join(' ')}`,
      );
      const secrets = probe.filter((l) => l.startsWith('secret:'));
      assert.deepEqual(secrets, [], `secret-like files: ${secrets.join(' ')}`);
      return `${(size / 1e6).toFixed(0)} MB; Node.js ${node}; revision ${oci('revision').slice(0, 12)}; 0 of ${devDependencies.length} dev dependencies`;
    });
    await check('image: every process read-only, uid 1000, no capabilities, PID 1', () => {
      const names = ['migrate', 'catalog-api', 'provisioner-api', 'provisioner-worker'];
      for (const name of names) {
        const c = stack.container(name);
        const cfg = JSON.parse(podman(['inspect', '--format', '{{json .HostConfig}}', c]).stdout);
        assert.equal(cfg.ReadonlyRootfs, true, `${name}: root filesystem writable`);
        assert.ok(
          cfg.SecurityOpt.some((o) => o.startsWith('no-new-privileges')),
          `${name}: privileges can grow`,
        );
        if (name === 'migrate') continue; // exited: its configuration is what was checked
        const status = podman([
          'exec',
          c,
          'sh',
          '-c',
          "id -u; grep CapEff /proc/1/status; touch /app/x 2>&1 || true; tr '\\0' ' ' < /proc/1/cmdline",
        ]).stdout.split('\n');
        assert.equal(status[0], '1000', `${name}: uid ${status[0]}`);
        assert.match(status[1], /CapEff:\s+0+$/, `${name}: ${status[1]}`);
        assert.match(status[2] ?? '', /Read-only file system/, `${name}: /app writable`);
        // No init process: the app is PID 1, so its own handlers must answer SIGTERM.
        assert.match(status[3] ?? '', /^node /, `${name}: PID 1 is ${status[3]}`);
      }
      return `${names.length} processes`;
    });

    // ---- compose: the demo import end to end, on the upgraded stack ------------------------
    await check('compose: demo import drop zone -> storage -> catalog', async () => {
      const { record, files } = await client.importEndToEnd(
        'ELX-DS-0002',
        volumePath(stack, 'storage'),
      );
      return `${record.catalog.accession}: ${files.length} files, ${record.progress.bytes_done} bytes`;
    });

    await check('SIGTERM as PID 1: a migration waiting on its lock exits at once', async () => {
      // The runner's lock (apps/catalog-api/src/database/migration-runner.ts), held here so the
      // migration waits: a process that ignored SIGTERM would wait out the stop time-out.
      const lockId = /MIGRATION_LOCK_ID = ([\d_]+)/
        .exec(
          readFileSync(join(ROOT, 'apps/catalog-api/src/database/migration-runner.ts'), 'utf8'),
        )[1]
        .replaceAll('_', '');
      const holder = spawn(
        'podman',
        psqlArgs(
          stack,
          '-c',
          `SELECT pg_advisory_lock(${lockId})`,
          '-c',
          'SELECT pg_sleep(600) /* held by test:deploy */',
        ),
        { env: podmanEnv(), stdio: 'ignore' },
      );
      const name = `${stack.project}-migrate-sigterm`;
      try {
        await until(
          'the lock held',
          () =>
            psql(stack, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted`) ===
            '1',
        );
        stack.run(['node', 'dist/apps/catalog-api/apps/catalog-api/src/database/migrate.js'], {
          envFiles: [join(envDir, 'catalog.env')],
          image: headImage,
          detach: name,
        });
        // The runner asks for the lock again and again (migration-runner.ts): it waits once it
        // has asked.
        await until(
          'the migration waiting for the lock',
          () =>
            psql(
              stack,
              `SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_try_advisory_lock%' AND pid <> pg_backend_pid()`,
            ) !== '0',
        );
        const t0 = Date.now();
        podman(['stop', '--time', '30', name]);
        const took = (Date.now() - t0) / 1000;
        const { exitCode } = inspect(name);
        const log = podman(['logs', name], { allowFail: true });
        assert.equal(exitCode, 143, `exit ${exitCode}: ${log.stderr.slice(-300)}`);
        assert.match(log.stderr, /migration stopped by SIGTERM/);
        assert.ok(took < 10, `stopping took ${took} s`);
        return `exit 143 after ${took.toFixed(1)} s (the stop time-out is 30 s)`;
      } finally {
        podman(['rm', '--force', name], { allowFail: true });
        psql(
          stack,
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%held by test:deploy%' AND pid <> pg_backend_pid()",
        );
        holder.kill();
      }
    });

    // ---- faults ------------------------------------------------------------------------------
    await check('fault: worker killed during an import', async () => {
      // 800 MiB in 100 files: on a quiet machine the worker copies and hashes 400 MiB in well
      // under a second, which left no time to kill it mid-import.
      addDataset((a, o) => stack.run(a, o), stack.volume('dropzone'), 'ELX-DS-0101', 800);
      // Found before the import starts, so that nothing but the poll stands between the copy's
      // first bytes and the kill.
      const workerPid = Number(
        podman(['inspect', '--format', '{{.State.Pid}}', stack.container('provisioner-worker')])
          .stdout,
      );
      const { id } = await client.importDataset('ELX-DS-0101');
      await until(
        'copy under way',
        async () => (await client.importRecord(id)).progress.bytes_done > 0,
        60_000,
        50,
      );
      // As a crash: the process killed from outside podman (`podman kill` counts as a stop by
      // the user, after which no restart policy applies).
      process.kill(workerPid, 'SIGKILL');
      killed.add('provisioner-worker');
      const at = (await client.importRecord(id)).progress;
      assert.ok(at.bytes_done < at.bytes_total, 'the import finished before the kill');
      // The restart policy brings it back; the import is picked up again when its lock expires.
      const record = await client.waitImported(id, 180_000);
      const once = (await client.imports()).items.filter((r) => r.key === 'ELX-DS-0101');
      assert.equal(once.length, 1);
      const registered = await client.datasets(`?elu_accession=${record.catalog.accession}`);
      assert.equal(registered.items.length, 1);
      const copies = readdirSync(
        join(volumePath(stack, 'storage'), 'projects/PD-OMICS/ELX_LU_SUB-1/data/raw'),
      ).filter((n) => n.startsWith('ELX-DS-0101'));
      assert.deepEqual(copies, ['ELX-DS-0101']);
      return `killed at ${at.files_done}/${at.files_total} files; imported once (attempt ${record.attempts}), registered once`;
    });
    for (const service of ['postgres', 'redis']) {
      await check(`fault: ${service} restarted, services recover on their own`, async () => {
        const apps = ['catalog-api', 'provisioner-api', 'provisioner-worker'];
        const startedAt = Object.fromEntries(
          apps.map((a) => [a, inspect(stack.container(a)).startedAt]),
        );
        const t0 = Date.now();
        podman(['restart', '--time', '10', stack.container(service)]);
        await until(
          'ready again',
          async () =>
            (await client.ready(client.catalog)) && (await client.ready(client.provisioner)),
          90_000,
        );
        const dataset = service === 'postgres' ? 'ELX-DS-0003' : null;
        if (dataset === null) {
          // A new import through the restarted queue.
          addDataset((a, o) => stack.run(a, o), stack.volume('dropzone'), 'ELX-DS-0102', 1);
          await client.waitImported((await client.importDataset('ELX-DS-0102')).id);
        } else {
          await client.datasets();
        }
        for (const a of apps)
          assert.equal(inspect(stack.container(a)).startedAt, startedAt[a], `${a} was restarted`);
        return `ready again after ${((Date.now() - t0) / 1000).toFixed(1)} s, no app restarted`;
      });
    }
    await check('fault: whole stack stopped (SIGTERM) and started', async () => {
      const datasets = (await client.datasets()).items.length;
      const imports = (await client.imports()).items.map((r) => `${r.id}:${r.state}`).sort();
      const files = digests(volumePath(stack, 'storage'));
      const t0 = Date.now();
      stack.stop();
      const stopped = (Date.now() - t0) / 1000;
      // Each app, PID 1 of its container, closed on SIGTERM by itself: exit 0, not a kill (137).
      for (const app of ['catalog-api', 'provisioner-api', 'provisioner-worker'])
        assert.equal(inspect(stack.container(app)).exitCode, 0, `${app} did not exit 0 on SIGTERM`);
      await stack.up();
      assert.equal((await client.datasets()).items.length, datasets);
      assert.deepEqual(
        (await client.imports()).items.map((r) => `${r.id}:${r.state}`).sort(),
        imports,
      );
      assert.deepEqual(digests(volumePath(stack, 'storage')), files);
      return `stopped in ${stopped.toFixed(1)} s, each app exit 0; ${datasets} datasets, ${imports.length} imports, ${Object.keys(files).length} files kept`;
    });

    // ---- backup and restore: the recovery runbook on this stack -------------------------------
    // Before the drains: their 2 GiB copies would only lengthen the backup.
    stack = await backupRestoreChecks({
      check,
      stack,
      client,
      envDir,
      keys,
      postgresImage: bases.POSTGRES_IMAGE,
      psql: (sql) => psql(stack, sql),
      volumePath,
      digests,
      waitReady: () =>
        until(
          'ready after the restore',
          async () =>
            (await client.ready(client.catalog)) && (await client.ready(client.provisioner)),
          90_000,
        ),
    });

    // ---- drains: imports stopped by SIGTERM and SIGKILL at half, resumed ---------------------------
    await drainChecks({ check, stack, client, killed, envDir, psql, volumePath });

    // ---- limits --------------------------------------------------------------------------------
    await check("limits: the manifests' CPU and memory; no OOM, no restart", () => {
      const rows = [];
      for (const [service, file] of Object.entries(SERVICES_OF_MANIFESTS)) {
        const want = manifestLimits(file);
        const cfg = JSON.parse(
          podman(['inspect', '--format', '{{json .HostConfig}}', stack.container(service)]).stdout,
        );
        assert.equal(cfg.Memory, want.memory, `${service}: memory ${cfg.Memory} != ${want.memory}`);
        assert.equal(
          cfg.NanoCpus,
          want.cpus * 1e9,
          `${service}: cpus ${cfg.NanoCpus / 1e9} != ${want.cpus}`,
        );
        const state = inspect(stack.container(service));
        assert.equal(state.oomKilled, false, `${service} was OOM-killed`);
        if (!killed.has(service))
          assert.equal(state.restarts, 0, `${service} restarted ${state.restarts} times`);
        rows.push(`${service} ${want.memory >> 20}Mi/${want.cpus}`);
      }
      return rows.join(', ');
    });
    await check('memory used by each process (peak of its cgroup)', () => {
      return Object.keys(SERVICES_OF_MANIFESTS)
        .filter((s) => s !== 'migrate')
        .map((s) => {
          const peak = podman(
            ['exec', stack.container(s), 'cat', '/sys/fs/cgroup/memory/memory.max_usage_in_bytes'],
            { allowFail: true },
          ).stdout;
          return `${s} ${peak ? Math.round(Number(peak) / 1048576) : '?'} MiB`;
        })
        .join(', ');
    });

    // ---- DRS: a researcher's read through the nginx offload (drs-offload.mjs) ------------------
    // After the checks that compare the stack's state: run before the backup, the working tree's
    // demo loader (the researcher's grants) and the stack's time with DRS on left ELX-DS-0001
    // and -0002 "added" by the restore's reregister; and recreating the containers resets the
    // OOM flags, restart counts and memory peaks the limits checks read.
    await drsOffloadChecks({
      check,
      stack,
      client,
      envDir,
      volumePath,
      until,
      drsPublish: `127.0.0.1:${await freePort()}`,
    });

    // ---- day two: a rolling update under load --------------------------------------------------
    await check('rolling update: N-1 to N, then a settings change, under load', () =>
      rollingUpdate({
        stack,
        envFile: join(envDir, 'catalog.env'),
        oldImage,
        newImage: headImage,
        haproxyImage: bases.HAPROXY_IMAGE,
        port: dayTwoPort,
        url: dayTwoUrl,
        globalKey: keys.GLOBAL_API_KEY,
        ...sampleOf((sql) => psql(stack, sql)),
        psql: (sql) => psql(stack, sql),
      }),
    );
  } finally {
    if (process.env.DEPLOY_KEEP !== 'on') stack.down({ purge: true });
    rmSync(envDir, { recursive: true, force: true });
  }

  // ---- kube: the dev overlay under podman kube play ------------------------------------------
  const kube = new KubePlay({
    prefix: `rds-kube-${process.pid}`,
    images: { app: headImage, postgres: bases.POSTGRES_IMAGE, redis: bases.REDIS_IMAGE },
  });
  try {
    const order = [];
    await check('kube play: dev overlay, migration first, ready on probes', async () => {
      await kube.up({ log: (m) => order.push(m.split(' ')[0]) });
      assert.equal(order.indexOf('catalog-migrate'), 2, `order: ${order.join(', ')}`);
      return order.join(' -> ');
    });
    await check('kube play: a fresh deployment answers term searches (no demo data)', () => {
      assert.ok(order.length === 6, 'the pods are not up');
      return termSearchAnswers(kube.url('catalog-api', 3000));
    });
    await check('kube play: demo import drop zone -> storage -> catalog', async () => {
      assert.ok(order.length === 6, 'the pods are not up');
      const secrets = kube.secretData;
      kube.run(
        [
          'node',
          'dist/apps/catalog-api/apps/catalog-api/src/demo/demo-data.cli.js',
          '--json',
          '--keys-file',
          '/tmp/demo-keys.json',
        ],
        {
          env: { DATABASE_URL: secrets['catalog-api-secrets'].DATABASE_URL },
        },
      );
      kube.run(['node', 'dist/apps/provisioner/apps/provisioner/src/demo/demo-dropzone.cli.js'], {
        volumes: [`${kube.name('provisioner-dropzone')}:/data/dropzone`],
        env: { SOURCES: secrets['provisioner-secrets'].SOURCES },
      });
      const kubeClient = new Client(
        kube.url('catalog-api', 3000),
        kube.url('provisioner-api', 3001),
        {
          GLOBAL_API_KEY: secrets['catalog-api-secrets'].GLOBAL_API_KEY,
          PROVISIONER_API_KEY: secrets['provisioner-secrets'].PROVISIONER_API_KEY,
        },
      );
      const storage = podman([
        'volume',
        'inspect',
        '--format',
        '{{.Mountpoint}}',
        kube.name('provisioner-storage'),
      ]).stdout;
      const { record, files } = await kubeClient.importEndToEnd('ELX-DS-0001', storage);
      return `${record.catalog.accession}: ${files.length} files`;
    });
  } finally {
    if (process.env.DEPLOY_KEEP !== 'on') kube.down();
  }
  const failed = results.filter((ok) => !ok).length;
  process.stdout.write(
    `test:deploy: ${results.length - failed} passed, ${failed} failed, ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
  );
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`test:deploy: ${error.stack}\n`);
    process.exit(1);
  },
);
