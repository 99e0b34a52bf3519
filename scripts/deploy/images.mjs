// The images a deployment on podman needs: the bases (official where they can be pulled, local
// equivalents otherwise: deploy/podman/build-bases.sh) and the project's image, built from the
// working tree or from a git ref. npm reaches its registry with the machine's CA bundle, handed
// to the build as a secret (never in a layer).
import { spawnSync } from 'node:child_process';
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import {
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { podman, podmanEnv, podmanLive, ROOT } from './podman-stack.mjs';

const CA_BUNDLE = process.env.NODE_EXTRA_CA_CERTS || '/etc/ssl/certs/ca-certificates.crt';

/** NODE_BASE, POSTGRES_IMAGE, REDIS_IMAGE: made or found by build-bases.sh. */
export function ensureBases() {
  const out = spawnSync('bash', [join(ROOT, 'deploy/podman/build-bases.sh')], {
    env: podmanEnv(),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (out.status !== 0) throw new Error(`building the base images failed (${out.status})`);
  return Object.fromEntries(
    out.stdout
      .trim()
      .split('\n')
      .map((line) => line.split('=')),
  );
}

export function imageExists(image) {
  return podman(['image', 'exists', image], { allowFail: true }).status === 0;
}

const git = (...args) =>
  spawnSync('git', ['-C', ROOT, ...args], { encoding: 'utf8' }).stdout?.trim() ?? '';

/**
 * The OCI labels' facts of a commit: package.json's version, the commit and its time (not the
 * build's: the same sources label the same). A working tree with changes is `<commit>-dirty`.
 */
export function imageFacts(ref = 'HEAD', { dirty = false } = {}) {
  const pkg = JSON.parse(git('show', `${ref}:package.json`) || '{}');
  const revision = git('rev-parse', `${ref}^{commit}`);
  return {
    VERSION: pkg.version ?? 'unknown',
    REVISION: dirty && git('status', '--porcelain') !== '' ? `${revision}-dirty` : revision,
    CREATED: git('log', '-1', '--format=%cI', ref),
  };
}

const OCI_LABEL = {
  VERSION: 'org.opencontainers.image.version',
  REVISION: 'org.opencontainers.image.revision',
  CREATED: 'org.opencontainers.image.created',
};

/** Builds the project's image from `dir` (the working tree by default). */
export async function buildImage(
  image,
  nodeBase,
  { dir = ROOT, quiet = true, facts = imageFacts('HEAD', { dirty: true }) } = {},
) {
  // With no default ulimits (containers.conf) a build step gets 1024 open files, fewer than
  // `npm install` opens at once for this tree (EMFILE); the build alone gets more, explicitly.
  const args = [
    'build',
    '--network=host',
    '--ulimit',
    'nofile=8192:8192',
    '--build-arg',
    `NODE_BASE=${nodeBase}`,
    '--tag',
    image,
  ];
  // Podman's builder (buildah) reuses a cached LABEL step when only the build argument it reads
  // changed, so an image of the same sources would keep an earlier build's revision and date;
  // a --label is set on the built image itself, whatever the cache held.
  for (const [name, value] of Object.entries(facts))
    args.push('--build-arg', `${name}=${value}`, '--label', `${OCI_LABEL[name]}=${value}`);
  if (existsSync(CA_BUNDLE)) args.push('--secret', `id=npm_ca,src=${CA_BUNDLE}`);
  await podmanLive([...args, dir], { quiet });
}

/**
 * Builds the image of an earlier commit. Its sources and lock are the ref's; the Dockerfile and
 * .dockerignore are the working tree's when the ref's cannot take a local base (a Dockerfile
 * without the NODE_BASE argument names only the official image, which may not be pullable).
 * The ref's lock is completed first (completeLock).
 */
export async function buildImageOfRef(image, nodeBase, ref) {
  const dir = mkdtempSync(join(tmpdir(), 'rds-ref-'));
  try {
    const archive = spawnSync(
      'sh',
      ['-c', `git -C "${ROOT}" archive "${ref}" | tar -x -C "${dir}"`],
      { encoding: 'utf8' },
    );
    if (archive.status !== 0) throw new Error(`git archive ${ref} failed: ${archive.stderr}`);
    const dockerfile = spawnSync('git', ['-C', ROOT, 'show', `${ref}:Dockerfile`], {
      encoding: 'utf8',
    }).stdout;
    if (!dockerfile.includes('NODE_BASE')) {
      cpSync(join(ROOT, 'Dockerfile'), join(dir, 'Dockerfile'));
      cpSync(join(ROOT, '.dockerignore'), join(dir, '.dockerignore'));
    }
    completeLock(dir, ref);
    await buildImage(image, nodeBase, { dir, facts: imageFacts(ref) });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * An earlier commit's lock as today's npm writes it. A lock can lack the entries of optional
 * packages built for other platforms (an npm that wrote it left them out); `npm install` adds
 * them from the registry, and the image's build then fails its check that the install left the
 * lock unchanged. The lock is completed here, and only such entries may be added: what is
 * installed on this platform is the ref's, entry for entry; anything else fails, saying what.
 */
export function completeLock(dir, ref) {
  const lockFile = join(dir, 'package-lock.json');
  const before = JSON.parse(readFileSync(lockFile, 'utf8')).packages;
  const npm = spawnSync(
    'npm',
    ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'],
    { cwd: dir, encoding: 'utf8' },
  );
  if (npm.status !== 0) throw new Error(`completing ${ref}'s lock failed: ${npm.stderr}`);
  const after = JSON.parse(readFileSync(lockFile, 'utf8')).packages;
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const here = (list, value) => list === undefined || list.includes(value);
  const changed = Object.keys({ ...before, ...after }).filter((key) => {
    if (same(before[key], after[key])) return false;
    const added = after[key];
    const foreign =
      before[key] === undefined &&
      added.optional === true &&
      !(here(added.os, process.platform) && here(added.cpu, process.arch));
    return !foreign;
  });
  if (changed.length > 0)
    throw new Error(
      `${ref}'s lock no longer installs as written: npm changed ${changed.slice(0, 5).join(', ')}` +
        (changed.length > 5 ? ` and ${changed.length - 5} more` : ''),
    );
}

const hex = (bytes) => randomBytes(bytes).toString('hex');

/**
 * The compose stack's env files (deploy/compose/example's shape) with fresh random secrets, in
 * `dir` (kept between runs: the database is initialised with this password). Returns the keys.
 */
export function ensureEnvFiles(dir) {
  const keysFile = join(dir, 'keys.json');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (existsSync(keysFile)) return JSON.parse(readFileSync(keysFile, 'utf8'));
  const keys = {
    POSTGRES_PASSWORD: hex(24),
    GLOBAL_API_KEY: hex(24),
    PROVISIONER_API_KEY: hex(24),
    PROVISIONER_READ_API_KEYS: hex(24),
    CATALOG_API_KEY: hex(24),
  };
  const digest = createHash('sha256').update(keys.CATALOG_API_KEY).digest('hex');
  const write = (name, lines) =>
    writeFileSync(join(dir, name), `${lines.join('\n')}\n`, { mode: 0o600 });
  write('postgres.env', [
    'POSTGRES_USER=catalog',
    `POSTGRES_PASSWORD=${keys.POSTGRES_PASSWORD}`,
    'POSTGRES_DB=catalog',
  ]);
  write('catalog.env', [
    `DATABASE_URL=postgres://catalog:${keys.POSTGRES_PASSWORD}@postgres:5432/catalog`,
    `GLOBAL_API_KEY=${keys.GLOBAL_API_KEY}`,
    'CATALOG_SOURCE=http://localhost:3000',
    'LOG_LEVEL=info',
    `REGISTRATION_API_KEY_SHA256=${digest}`,
  ]);
  write('provisioner.env', [
    'REDIS_URL=redis://redis:6379',
    'QUEUE_PREFIX=provisioner',
    `PROVISIONER_API_KEY=${keys.PROVISIONER_API_KEY}`,
    `PROVISIONER_READ_API_KEYS=${keys.PROVISIONER_READ_API_KEYS}`,
    'STORAGE_ROOT=/data/storage',
    'SOURCES=[{"name":"dropzone","type":"dropzone","root":"/data/dropzone"}]',
    'LOG_LEVEL=info',
    'CATALOG_URL=http://catalog-api:3000',
    `CATALOG_API_KEY=${keys.CATALOG_API_KEY}`,
  ]);
  writeFileSync(keysFile, JSON.stringify(keys, null, 2), { mode: 0o600 });
  return keys;
}

/**
 * What docker-compose.drs.yml needs beside the env files, in `dir`, fresh random secrets (kept
 * between runs, as ensureEnvFiles's): the catalog's visa signing key (RSA, PKCS#8 PEM; owned by
 * uid 1000, the apps' user, which reads it through a bind mount), the broker key the provisioner
 * reads visas with (its SHA-256 for the catalog) and the access URLs' signing key. Returns them.
 */
export function ensureDrsEnvFiles(dir) {
  const keysFile = join(dir, 'drs-keys.json');
  if (existsSync(keysFile)) return JSON.parse(readFileSync(keysFile, 'utf8'));
  const keys = { GA4GH_BROKER_API_KEY: hex(24), DRS_URL_SIGNING_KEY: hex(32) };
  const pem = join(dir, 'ga4gh-visa-key.pem');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(pem, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o400 });
  chownSync(pem, 1000, 1000);
  const digest = createHash('sha256').update(keys.GA4GH_BROKER_API_KEY).digest('hex');
  writeFileSync(join(dir, 'catalog-drs.env'), `GA4GH_BROKER_API_KEY_SHA256=${digest}\n`, {
    mode: 0o600,
  });
  writeFileSync(
    join(dir, 'provisioner-drs.env'),
    `DRS_CATALOG_BROKER_KEY=${keys.GA4GH_BROKER_API_KEY}\nDRS_URL_SIGNING_KEY=${keys.DRS_URL_SIGNING_KEY}\n`,
    { mode: 0o600 },
  );
  writeFileSync(keysFile, JSON.stringify(keys, null, 2), { mode: 0o600 });
  return keys;
}

/** The demo catalog and the demo drop zone, loaded into a running stack (idempotent). */
export function loadDemo(stack, envDir) {
  const catalog = stack.run(
    [
      'node',
      'dist/apps/catalog-api/apps/catalog-api/src/demo/demo-data.cli.js',
      '--json',
      '--keys-file',
      '/tmp/demo-keys.json',
    ],
    { envFiles: [join(envDir, 'catalog.env')] },
  );
  const dropzone = stack.run(
    ['node', 'dist/apps/provisioner/apps/provisioner/src/demo/demo-dropzone.cli.js', '--json'],
    {
      envFiles: [join(envDir, 'provisioner.env')],
      volumes: [`${stack.volume('dropzone')}:/data/dropzone`],
    },
  );
  const last = (text) => JSON.parse(text.trim().split('\n').pop());
  return { catalog: last(catalog.stdout), dropzone: last(dropzone.stdout) };
}
