// What `npm start` makes of its environment and arguments, apart from the doing, so that a test
// can check the defaults (test/npm-start.spec.ts).

import { createHash } from 'node:crypto';

const FLAGS = new Set(['--demo-data', '--help', '-h']);

export const USAGE = `Usage: npm start [-- --demo-data]

Builds when needed and runs the catalog API, the provisioner API and its worker on this machine.
Without DATABASE_URL an embedded PostgreSQL under .data/ is started and the demo data loaded into
it; --demo-data loads the demo data into the configured database too. Ports: CATALOG_PORT (3000),
PROVISIONER_PORT (3001), WORKER_HEALTH_PORT (3002), EMBEDDED_POSTGRES_PORT (54329). See README.md.`;

/** The ports npm start listens on, by the variable that sets each, with its default. */
const PORTS = {
  catalog: ['CATALOG_PORT', 3000],
  provisioner: ['PROVISIONER_PORT', 3001],
  worker: ['WORKER_HEALTH_PORT', 3002],
  embeddedPostgres: ['EMBEDDED_POSTGRES_PORT', 54329],
};

function portsOf(env) {
  const ports = {};
  for (const [name, [variable, fallback]] of Object.entries(PORTS)) {
    const text = env[variable];
    const port = text === undefined || text === '' ? fallback : Number(text);
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw new Error(`${variable} must be a port number (1-65535), not "${text}"`);
    }
    ports[name] = port;
  }
  return ports;
}

/**
 * `embedded`: no DATABASE_URL, so an embedded PostgreSQL is started under .data/.
 * `demoData`: the demo catalog, its keys and the demo drop zone are loaded only into that
 * embedded database, or anywhere when asked with --demo-data (never by accident into a real one).
 * `host`: the services listen on the loopback interface unless HOST says otherwise.
 */
export function startOptions(env, argv) {
  const unknown = argv.filter((arg) => !FLAGS.has(arg));
  if (unknown.length > 0) {
    throw new Error(`unknown argument ${unknown.join(' ')} (usage: npm start [-- --demo-data])`);
  }
  if (argv.includes('--help') || argv.includes('-h')) return { help: true };
  // One PORT cannot name three listeners: refused, never silently ignored.
  if (env.PORT) {
    throw new Error(
      `PORT is not read by npm start, which runs three services: set CATALOG_PORT (3000), PROVISIONER_PORT (3001) and WORKER_HEALTH_PORT (3002) instead, and unset PORT`,
    );
  }
  const embedded = !env.DATABASE_URL;
  return {
    embedded,
    demoData: embedded || argv.includes('--demo-data'),
    host: env.HOST || '127.0.0.1',
    ports: portsOf(env),
  };
}

/** Why a child process ended, in words: a kill by SIGKILL may be the out-of-memory killer. */
export function deathOf(code, signal, nodeArgs = []) {
  if (signal === 'SIGKILL') {
    const heap = nodeArgs.find((arg) => arg.startsWith('--max-old-space-size='));
    const cap = heap ? `; its heap cap is ${heap.split('=')[1]} MiB` : '';
    return `killed by SIGKILL (the out-of-memory killer, or a kill -9${cap})`;
  }
  if (signal) return `killed by ${signal}`;
  return `exited with code ${code} (its last log lines above say why)`;
}

const sha256 = (text) => createHash('sha256').update(text).digest('hex');

/** `value` added to a comma list, which keeps what it held (an operator's setting is never dropped). */
export function appendToList(list, value) {
  const items = (list ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  return [...new Set([...items, value])].join(',');
}

/**
 * The catalog's lists of accepted key digests under npm start: the provisioner's keys (`keys`,
 * the local ones or the environment's) appended to what the operator set in `env`, never in
 * its place (a broker or a provisioner configured the documented way keeps working).
 */
export function catalogKeyDigests(env, keys) {
  return {
    REGISTRATION_API_KEY_SHA256: appendToList(env.REGISTRATION_API_KEY_SHA256, sha256(keys.CATALOG_API_KEY)),
    GA4GH_BROKER_API_KEY_SHA256: appendToList(env.GA4GH_BROKER_API_KEY_SHA256, sha256(keys.GA4GH_BROKER_API_KEY)),
  };
}

/**
 * What the deployment gives every process and npm start would otherwise leave out, read from
 * the files that set it, so a process started here uses memory as it does in a pod: the image's
 * allocator tunables (the Dockerfile's runtime ENV; docs/decisions/malloc-mmap-threshold.md) and
 * the worker's copy threads (k8s/base/provisioner/config.env: two, where npm start would take
 * one per core up to four, each thread some 20 MiB more). An operator's setting wins.
 */
export function asDeployed(env, { dockerfile, provisionerConfig }) {
  const runtime = dockerfile.slice(dockerfile.indexOf(' AS runtime'));
  const tunables = /GLIBC_TUNABLES=(\S+)/.exec(runtime)?.[1];
  const threads = /^IMPORT_COPY_THREADS=(\d+)$/m.exec(provisionerConfig)?.[1];
  if (!tunables || !threads) {
    throw new Error('Dockerfile or k8s/base/provisioner/config.env: GLIBC_TUNABLES or IMPORT_COPY_THREADS not found');
  }
  return {
    all: { GLIBC_TUNABLES: env.GLIBC_TUNABLES ?? tunables },
    worker: { IMPORT_COPY_THREADS: env.IMPORT_COPY_THREADS ?? threads },
  };
}
