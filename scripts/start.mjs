#!/usr/bin/env node
// `npm start`: one command that runs everything on a fresh clone. Installs dependencies when
// needed, builds, starts an embedded PostgreSQL when DATABASE_URL is not set (the queue rides
// on it when REDIS_URL is not set either), loads demo data into that embedded database (into
// a configured one only with `npm start -- --demo-data`), and runs catalog-api, the
// provisioner API and a provisioner worker, listening on 127.0.0.1 unless HOST says otherwise,
// until Ctrl-C, which stops all of them cleanly. The worker registers each import in the
// catalog with a registration key of its own (the catalog gets only the key's SHA-256).
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { embeddedPostgresBlocker } from './lib/embedded-postgres.mjs';
import { asDeployed, catalogKeyDigests, deathOf, startOptions, USAGE } from './lib/start-options.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// START_DATA_DIR: another place for the keys, the embedded database and the state file (tests).
const dataDir = resolve(root, process.env.START_DATA_DIR ?? '.data');
/** What a running `npm start` tells the tools beside it (the catalog CLI, `npm run drs`). */
const stateFile = join(dataDir, 'npm-start.json');
const say = (message) => process.stdout.write(`[start] ${message}\n`);

function run(command, args, env = process.env) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status})`);
}

/** The newest modification time of the TypeScript under `path` that a build compiles (tests aside). */
function newestMtime(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return path.endsWith('.ts') && !/\.(e2e-)?spec\.ts$/.test(path) ? stat.mtimeMs : 0;
  return readdirSync(path).reduce((max, name) => Math.max(max, newestMtime(join(path, name))), 0);
}

function installIfNeeded() {
  const marker = join(root, 'node_modules', '.package-lock.json');
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(join(root, 'package-lock.json')).mtimeMs) return;
  say('installing dependencies (npm install)…');
  run('npm', ['install', '--no-audit', '--no-fund']);
}

/** The compiled entry points: a build is current when none is older than the newest source. */
const BUILT = [
  'dist/apps/catalog-api/apps/catalog-api/src/main.js',
  'dist/apps/provisioner/apps/provisioner/src/main.js',
  'dist/apps/provisioner/apps/provisioner/src/worker.js',
];

function buildIfNeeded() {
  const sources = Math.max(...['apps/catalog-api/src', 'apps/provisioner/src', 'libs'].map((dir) => newestMtime(join(root, dir))));
  const built = BUILT.map((path) => join(root, path));
  if (built.every((path) => existsSync(path) && statSync(path).mtimeMs >= sources)) return;
  say('building…');
  run('npm', ['run', 'build']);
}

/** The demo researcher's subject (DEMO_RESEARCHER in apps/catalog-api/src/demo/demo-catalog.ts). */
const DEMO_RESEARCHER = 'demo-oidc-rita-researcher';
/** The publisher /api/dcat names when the demo runs without DCAT_PUBLISHER_NAME. */
const DEMO_DCAT_PUBLISHER = 'Demo Institute (npm start; set DCAT_PUBLISHER_NAME)';

const LOCAL_KEYS = [
  'GLOBAL_API_KEY',
  'PROVISIONER_API_KEY',
  'PROVISIONER_READ_API_KEYS',
  'CATALOG_API_KEY',
  // The provisioner's key for reading passports from the catalog, and its DRS access-URL key.
  'GA4GH_BROKER_API_KEY',
  'DRS_URL_SIGNING_KEY',
];

/** Secrets for local use, made once and kept in .data/ (never committed); missing ones are added. */
function localKeys() {
  const file = join(dataDir, 'local-keys.json');
  const kept = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  const missing = LOCAL_KEYS.filter((name) => !kept[name]);
  if (missing.length === 0) return kept;
  const keys = { ...kept, ...Object.fromEntries(missing.map((name) => [name, randomBytes(24).toString('hex')])) };
  writeFileSync(file, JSON.stringify(keys, null, 2), { mode: 0o600 });
  return keys;
}

/**
 * The GA4GH visa signing key of this installation (RSA 2048, PKCS#8 PEM), made once in .data/
 * and never committed; GA4GH_VISA_KEY_FILE given in the environment wins.
 */
function localVisaKey() {
  const file = join(dataDir, 'ga4gh-visa-key.pem');
  if (!existsSync(file)) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  }
  return file;
}

/**
 * The archive's Crypt4GH secret key of this installation (c4gh-v1, unencrypted, as
 * `crypt4gh-keygen --nocrypt` writes it), made once in .data/ and never committed: `npm start`
 * runs in archive mode (STORAGE_ENCRYPTION=crypt4gh) unless the environment says otherwise.
 */
function localArchiveKey() {
  const file = join(dataDir, 'c4gh-archive.sec');
  if (!existsSync(file)) {
    const { privateKey } = generateKeyPairSync('x25519');
    const secret = Buffer.from(privateKey.export({ format: 'jwk' }).d, 'base64url');
    // Each field of the key file: its length (2 bytes, big-endian), then its bytes.
    const field = (value) => Buffer.concat([Buffer.from([value.length >> 8, value.length & 0xff]), value]);
    const body = Buffer.concat([Buffer.from('c4gh-v1'), field(Buffer.from('none')), field(Buffer.from('none')), field(secret)]);
    const pem = `-----BEGIN CRYPT4GH PRIVATE KEY-----\n${body.toString('base64')}\n-----END CRYPT4GH PRIVATE KEY-----\n`;
    writeFileSync(file, pem, { mode: 0o600 });
  }
  return file;
}

async function ensureDatabases(serverUrl, names) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: `${serverUrl}/postgres` });
  await client.connect();
  try {
    for (const name of names) {
      const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (!rowCount) await client.query(`CREATE DATABASE "${name}"`);
    }
  } finally {
    await client.end();
  }
}

async function waitReady(url, child, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (ended(child)) throw new Error(`${url}: the process exited (${child.signalCode ?? child.exitCode})`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`${url} not ready within ${timeoutMs / 1000} s`);
}

/** The child has ended: exited (exitCode) or been killed by a signal (signalCode, exitCode null). */
const ended = (child) => child.exitCode !== null || child.signalCode !== null;

const children = [];
let embedded;
let stopping = false;

/**
 * The embedded database runs as a separate process group: a terminal's Ctrl-C reaches only
 * this script, which stops the services first and the database last.
 */
function startEmbeddedDatabase(dir, port) {
  const child = spawn(process.execPath, [join(root, 'scripts/lib/embedded-postgres-server.mjs'), dir, String(port)], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolveStart, reject) => {
    let buffered = '';
    child.once('exit', (code, signal) => {
      reject(new Error(`the embedded PostgreSQL exited (${signal ?? code})`));
      // After it started: the services lose their database, so say so and stop them all.
      if (!stopping) {
        say(`the embedded PostgreSQL DIED: ${deathOf(code, signal)}; stopping everything`);
        void stopAll(1);
      }
    });
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      const line = buffered.split('\n')[0];
      if (!buffered.includes('\n')) return;
      const { url } = JSON.parse(line);
      resolveStart({
        url,
        pid: child.pid,
        stop: () =>
          new Promise((done) => {
            if (ended(child)) return done();
            child.once('exit', done);
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

async function stopAll(code) {
  if (stopping) return;
  stopping = true;
  say('stopping…');
  await Promise.all(
    children.map(
      ({ child }) =>
        new Promise((done) => {
          if (ended(child)) return done();
          const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
          child.once('exit', () => {
            clearTimeout(kill);
            done();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
  if (embedded) {
    say('stopping the embedded PostgreSQL…');
    await embedded.stop();
  }
  rmSync(stateFile, { force: true });
  say('stopped.');
  process.exit(code);
}

/**
 * Services run in process groups of their own, so each gets exactly one SIGTERM, from us. Their
 * stdin is a pipe from this process, watched by scripts/lib/end-with-parent.js: however this
 * process ends (a SIGKILL included), the pipe closes and each service shuts down.
 */
function startProcess(name, script, env, nodeArgs = []) {
  const watch = ['--require', join(root, 'scripts/lib/end-with-parent.js')];
  const child = spawn(process.execPath, [...watch, ...nodeArgs, script], {
    cwd: root,
    env: { ...env, END_WITH_PARENT: '1' },
    detached: true,
    stdio: ['pipe', 'inherit', 'inherit'],
  });
  child.on('exit', (code, signal) => {
    if (!stopping) {
      process.exitCode = 1;
      say(`${name} DIED: ${deathOf(code, signal, nodeArgs)}; stopping everything`);
      void stopAll(1);
    }
  });
  children.push({ name, child });
  return child;
}

async function main() {
  const options = startOptions(process.env, process.argv.slice(2));
  if (options.help) {
    console.log(USAGE);
    return;
  }
  installIfNeeded();
  // Before the build: a clone the embedded database cannot use stops here, in one line.
  const blocker = options.embedded ? await embeddedPostgresBlocker(join(dataDir, 'postgres')) : null;
  if (blocker) {
    say(blocker);
    process.exit(1);
  }
  buildIfNeeded();
  mkdirSync(dataDir, { recursive: true });
  const keys = { ...localKeys(), ...pick(process.env, LOCAL_KEYS) };

  let catalogDb = process.env.DATABASE_URL;
  let provisionerDb = process.env.PROVISIONER_DATABASE_URL ?? process.env.DATABASE_URL;
  if (options.embedded) {
    say(`no DATABASE_URL: starting an embedded PostgreSQL (data in ${join(dataDir, 'postgres')})…`);
    embedded = await startEmbeddedDatabase(join(dataDir, 'postgres'), options.ports.embeddedPostgres);
    await ensureDatabases(embedded.url, ['catalog', 'provisioner']);
    catalogDb = `${embedded.url}/catalog`;
    provisionerDb = `${embedded.url}/provisioner`;
  }

  // As the pods run: the image's allocator setting, the deployment's copy threads.
  const deployed = asDeployed(process.env, {
    dockerfile: readFileSync(join(root, 'Dockerfile'), 'utf8'),
    provisionerConfig: readFileSync(join(root, 'k8s/base/provisioner/config.env'), 'utf8'),
  });
  const base = {
    ...process.env,
    NODE_ENV: process.env.NODE_ENV ?? 'development',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    HOST: options.host,
    ...deployed.all,
  };
  const catalogEnv = {
    ...base,
    DATABASE_URL: catalogDb,
    GLOBAL_API_KEY: keys.GLOBAL_API_KEY,
    // The provisioner's keys, beside the provisioners and brokers the operator configured.
    ...catalogKeyDigests(process.env, keys),
    PORT: String(options.ports.catalog),
  };
  // /api/dcat is off without a publisher: the demo names one (an operator's setting wins).
  if (options.demoData) catalogEnv.DCAT_PUBLISHER_NAME ??= DEMO_DCAT_PUBLISHER;
  // Visas name the public URL (iss, jku): locally, the address the catalog listens on.
  catalogEnv.CATALOG_SOURCE ??= `http://${probeHost(options.host)}:${catalogEnv.PORT}`;
  catalogEnv.GA4GH_VISA_KEY_FILE ??= localVisaKey();
  const provisionerEnv = {
    ...base,
    DATABASE_URL: provisionerDb,
    PROVISIONER_API_KEY: keys.PROVISIONER_API_KEY,
    PROVISIONER_READ_API_KEYS: keys.PROVISIONER_READ_API_KEYS,
    // Every import the worker publishes is registered in this catalog.
    CATALOG_URL: process.env.CATALOG_URL ?? `http://${probeHost(options.host)}:${catalogEnv.PORT}`,
    CATALOG_API_KEY: keys.CATALOG_API_KEY,
    PORT: String(options.ports.provisioner),
    WORKER_HEALTH_PORT: String(options.ports.worker),
    ...deployed.worker,
  };
  // Imported data served as GA4GH DRS objects to holders of the catalog's visas.
  provisionerEnv.DRS_PUBLIC_URL ??= `http://${probeHost(options.host)}:${provisionerEnv.PORT}`;
  provisionerEnv.DRS_VISA_ISSUER ??= catalogEnv.CATALOG_SOURCE;
  provisionerEnv.DRS_CATALOG_BROKER_KEY ??= keys.GA4GH_BROKER_API_KEY;
  provisionerEnv.DRS_URL_SIGNING_KEY ??= keys.DRS_URL_SIGNING_KEY;
  // Archive mode: every imported file stored as Crypt4GH for a key kept in .data/.
  provisionerEnv.STORAGE_ENCRYPTION ??= 'crypt4gh';
  if (provisionerEnv.STORAGE_ENCRYPTION === 'crypt4gh') provisionerEnv.C4GH_ARCHIVE_SECRET_KEY_FILE ??= localArchiveKey();

  const catalogDist = join(root, 'dist/apps/catalog-api/apps/catalog-api/src');
  const provisionerDist = join(root, 'dist/apps/provisioner/apps/provisioner/src');
  say('migrating the catalog schema…');
  run(process.execPath, [join(catalogDist, 'database/migrate.js')], catalogEnv);
  const demo = options.demoData ? await loadDemoData(catalogDist, provisionerDist, catalogEnv, provisionerEnv) : {};
  if (!options.demoData) say('DATABASE_URL is set: no demo data loaded (`npm start -- --demo-data` loads it).');

  // The heap flags of the manifests (k8s/base/*/…deployment.yaml).
  const catalog = startProcess('catalog-api', join(catalogDist, 'main.js'), { ...catalogEnv, MIGRATIONS_RUN: 'false' }, [
    '--max-semi-space-size=4',
    '--max-old-space-size=256',
  ]);
  const api = startProcess('provisioner-api', join(provisionerDist, 'main.js'), provisionerEnv, ['--max-semi-space-size=4', '--max-old-space-size=192']);
  // The same flags as in the manifests (k8s/base/provisioner/worker-deployment.yaml).
  const worker = startProcess('provisioner-worker', join(provisionerDist, 'worker.js'), provisionerEnv, [
    '--max-semi-space-size=4',
    '--max-old-space-size=384',
    '--external-memory-accounted-in-global-limit',
  ]);
  await Promise.all([
    waitReady(`http://${probeHost(options.host)}:${catalogEnv.PORT}/health/ready`, catalog),
    waitReady(`http://${probeHost(options.host)}:${provisionerEnv.PORT}/health/ready`, api),
    waitReady(`http://${probeHost(options.host)}:${provisionerEnv.WORKER_HEALTH_PORT}/health/ready`, worker),
  ]);
  writeFileSync(
    stateFile,
    JSON.stringify(
      {
        pid: process.pid,
        catalog_url: `http://${probeHost(options.host)}:${catalogEnv.PORT}`,
        provisioner_url: provisionerEnv.DRS_PUBLIC_URL,
        catalog_database_url: embedded ? catalogDb : undefined,
        broker_key_file: join(dataDir, 'local-keys.json'),
        demo_researcher: options.demoData ? DEMO_RESEARCHER : undefined,
        processes: {
          ...Object.fromEntries(children.map(({ name, child }) => [name, child.pid])),
          ...(embedded ? { 'embedded-postgres': embedded.pid } : {}),
        },
      },
      null,
      2,
    ),
    { mode: 0o600 },
  );
  printBanner(catalogEnv, provisionerEnv, keys, demo, { embeddedUrl: embedded && catalogDb, demoData: options.demoData });
}

/** Where this machine reaches a service listening on `host` (a wildcard: the loopback). */
function probeHost(host) {
  if (['0.0.0.0', '::', '127.0.0.1'].includes(host)) return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function pick(source, names) {
  return Object.fromEntries(names.filter((n) => source[n]).map((n) => [n, source[n]]));
}

/** Runs the demo loaders when they exist; each prints a JSON line with what it made. */
async function loadDemoData(catalogDist, provisionerDist, catalogEnv, provisionerEnv) {
  // Random per installation, kept beside the embedded database so a restart finds them.
  const loaders = [
    [join(catalogDist, 'demo/demo-data.cli.js'), catalogEnv, ['--keys-file', join(dataDir, 'demo-keys.json')]],
    [join(provisionerDist, 'demo/demo-dropzone.cli.js'), provisionerEnv, []],
  ];
  say('loading demo data…');
  const results = {};
  for (const [script, env, args] of loaders) {
    if (!existsSync(script)) continue;
    const out = spawnSync(process.execPath, [script, '--json', ...args], { cwd: root, env, encoding: 'utf8' });
    if (out.status !== 0) throw new Error(`demo data (${script}) failed:\n${out.stderr}`);
    const last = out.stdout.trim().split('\n').pop();
    try {
      const summary = JSON.parse(last);
      results.keys = { ...results.keys, ...summary.keys };
    } catch {
      // a loader that prints no summary
    }
  }
  return results;
}

function printBanner(catalogEnv, provisionerEnv, keys, demo, { embeddedUrl, demoData }) {
  const host = probeHost(catalogEnv.HOST) === '127.0.0.1' ? 'localhost' : probeHost(catalogEnv.HOST);
  const catalog = `http://${host}:${catalogEnv.PORT}`;
  const provisioner = `http://${host}:${provisionerEnv.PORT}`;
  const writeKey = keys.PROVISIONER_API_KEY;
  const lines = [
    '',
    `Everything is up, listening on ${catalogEnv.HOST}${catalogEnv.HOST === '127.0.0.1' ? ' (this machine only; HOST=0.0.0.0 opens it to the network)' : ''}:`,
    `  catalog-api         ${catalog}   (try /api/cohorts)`,
    `    API docs          ${catalog}/api/docs   metrics ${catalog}/metrics`,
    `  provisioner API     ${provisioner}   (try /submissions/dropzone)`,
    `    API docs          ${provisioner}/docs   metrics ${provisioner}/metrics`,
    `    queue dashboard   ${provisioner}/admin/queues   (sign in with the provisioner write key)`,
    `  provisioner worker  http://${host}:${provisionerEnv.WORKER_HEALTH_PORT}/health/ready   metrics /metrics`,
    `  GA4GH DRS           ${provisioner}/ga4gh/drs/v1/service-info   (imported data, to visa holders)`,
  ];
  if (catalogEnv.DCAT_PUBLISHER_NAME) lines.push(`  DCAT                ${catalog}/api/dcat   (publisher: ${catalogEnv.DCAT_PUBLISHER_NAME})`);
  if (embeddedUrl) lines.push(`  embedded database   ${embeddedUrl}   (\`npm run catalog\` finds it while this runs)`);
  lines.push(
    '',
    `Keys (local use only; kept in ${join(dataDir, 'local-keys.json')}):`,
    `  catalog global key        ${keys.GLOBAL_API_KEY}`,
    `  provisioner write key     ${writeKey}`,
    `  provisioner read key      ${keys.PROVISIONER_READ_API_KEYS.split(',')[0]}`,
  );
  if (demo.keys) lines.push('', `Demo keys (random for this installation; kept in ${join(dataDir, 'demo-keys.json')}):`);
  for (const [name, value] of Object.entries(demo.keys ?? {})) lines.push(`  ${name}: ${value}`);
  if (demoData) {
    lines.push(
      '',
      `The journey: a deposit to a researcher's bytes (the demo researcher, subject ${DEMO_RESEARCHER}, holds a grant for the demo drop zone's datasets):`,
      `  curl -i -X POST -H 'X-API-Key: ${writeKey}' -H 'Content-Type: application/json' -d '{"dataset_id":"ELX-DS-0001"}' ${provisioner}/datasets/dropzone/import`,
      `  curl -H 'X-API-Key: ${writeKey}' ${provisioner}/imports/<id from the Location header>   (catalog.drs_uri, once registered)`,
      `  npm run drs -- get <drs_uri>             the dataset's manifest: the DRS URI of each file`,
      `  npm run drs -- get <a file's drs URI>    the file, its SHA-256 verified`,
    );
  }
  lines.push('', `Example: curl -H 'X-API-Key: ${keys.GLOBAL_API_KEY}' ${catalog}/api/datasets`, 'Ctrl-C stops everything.', '');
  process.stdout.write(lines.join('\n') + '\n');
}

process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));
main().catch(async (error) => {
  process.stderr.write(`[start] ${error.message}\n`);
  await stopAll(1);
});
