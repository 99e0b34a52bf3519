import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  utimesSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { imageEnv } from '../scripts/lib/deployed-node-args';

const ROOT = join(__dirname, '..');
const OPTIONS_MODULE = join(ROOT, 'scripts', 'lib', 'start-options.mjs');
const EMBEDDED_MODULE = join(ROOT, 'scripts', 'lib', 'embedded-postgres.mjs');
// Each test starts node processes: a second or two each on a loaded 2-core machine.
jest.setTimeout(30_000);

interface StartOptions {
  embedded: boolean;
  demoData: boolean;
  host: string;
  ports: Record<string, number>;
}

/** `name(...args)` of npm start's options module (ESM, so run by node), its answer as JSON. */
function callOptionsModule<T>(name: string, ...args: unknown[]): T {
  const script = `import(${JSON.stringify(OPTIONS_MODULE)}).then((m) => process.stdout.write(JSON.stringify(m[${JSON.stringify(name)}](...JSON.parse(process.env.ARGS_UNDER_TEST)))))`;
  const out = execFileSync(process.execPath, ['-e', script], {
    env: { ...process.env, ARGS_UNDER_TEST: JSON.stringify(args) },
    encoding: 'utf8',
  });
  return JSON.parse(out) as T;
}

/** What `npm start` decides for this environment and these arguments. */
function startOptions(env: Record<string, string>, argv: string[] = []): StartOptions {
  return callOptionsModule<StartOptions>('startOptions', env, argv);
}

/** The catalog's accepted key digests npm start sets for this environment and these keys. */
function catalogKeyDigests(
  env: Record<string, string>,
  keys: Record<string, string>,
): Record<string, string> {
  return callOptionsModule<Record<string, string>>('catalogKeyDigests', env, keys);
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('npm start (scripts/start.mjs) defaults', () => {
  it('listens on 127.0.0.1 unless HOST says otherwise', () => {
    expect(startOptions({}).host).toBe('127.0.0.1');
    expect(startOptions({ DATABASE_URL: 'postgres://db/catalog' }).host).toBe('127.0.0.1');
    expect(startOptions({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
  });

  // Issue 55: npm start replaced an operator's GA4GH_BROKER_API_KEY_SHA256 with its own digest, so
  // a passport broker configured the documented way got 401 on every route.
  it("appends its provisioner's key digests to the operator's lists, never in their place", () => {
    const keys = { CATALOG_API_KEY: 'c'.repeat(48), GA4GH_BROKER_API_KEY: 'b'.repeat(48) };
    const operator = {
      broker: sha256('operator-broker'),
      provisioner: sha256('other-provisioner'),
    };
    expect(
      catalogKeyDigests(
        {
          GA4GH_BROKER_API_KEY_SHA256: ` ${operator.broker} ,`,
          REGISTRATION_API_KEY_SHA256: operator.provisioner,
        },
        keys,
      ),
    ).toEqual({
      GA4GH_BROKER_API_KEY_SHA256: `${operator.broker},${sha256(keys.GA4GH_BROKER_API_KEY)}`,
      REGISTRATION_API_KEY_SHA256: `${operator.provisioner},${sha256(keys.CATALOG_API_KEY)}`,
    });
    // Nothing set: its own alone; its own already listed: listed once.
    expect(catalogKeyDigests({}, keys)).toEqual({
      GA4GH_BROKER_API_KEY_SHA256: sha256(keys.GA4GH_BROKER_API_KEY),
      REGISTRATION_API_KEY_SHA256: sha256(keys.CATALOG_API_KEY),
    });
    expect(
      catalogKeyDigests(
        { GA4GH_BROKER_API_KEY_SHA256: `${sha256(keys.GA4GH_BROKER_API_KEY)},${operator.broker}` },
        keys,
      ).GA4GH_BROKER_API_KEY_SHA256,
    ).toBe(`${sha256(keys.GA4GH_BROKER_API_KEY)},${operator.broker}`);
  });

  // Issue 55: a worker of npm start peaked higher than its pod; it ran without the image's
  // allocator setting and with a copy thread per core. It runs as the pod does now.
  it("gives its processes the image's allocator setting and the deployment's copy threads, an operator's winning", () => {
    const files = {
      dockerfile: readFileSync(join(ROOT, 'Dockerfile'), 'utf8'),
      provisionerConfig: readFileSync(join(ROOT, 'k8s/base/provisioner/config.env'), 'utf8'),
    };
    const deployed = callOptionsModule<Record<string, Record<string, string>>>(
      'asDeployed',
      {},
      files,
    );
    expect(deployed).toEqual({
      all: imageEnv(),
      worker: { IMPORT_COPY_THREADS: '2' },
    });
    expect(
      callOptionsModule('asDeployed', { GLIBC_TUNABLES: 'x=1', IMPORT_COPY_THREADS: '0' }, files),
    ).toEqual({ all: { GLIBC_TUNABLES: 'x=1' }, worker: { IMPORT_COPY_THREADS: '0' } });
  });

  it('loads demo data into the embedded database only', () => {
    expect(startOptions({})).toMatchObject({ embedded: true, demoData: true });
    expect(startOptions({ DATABASE_URL: 'postgres://db/catalog' })).toMatchObject({
      embedded: false,
      demoData: false,
    });
  });

  it('loads demo data into a configured database when asked with --demo-data', () => {
    expect(startOptions({ DATABASE_URL: 'postgres://db/catalog' }, ['--demo-data'])).toMatchObject({
      embedded: false,
      demoData: true,
    });
  });

  it('refuses PORT, which cannot name its three listeners, and reads the four port variables', () => {
    expect(() => startOptions({ PORT: '8080' })).toThrow(
      /PORT is not read by npm start, which runs three services: set CATALOG_PORT \(3000\), PROVISIONER_PORT \(3001\) and WORKER_HEALTH_PORT \(3002\) instead/,
    );
    expect(startOptions({}).ports).toEqual({
      catalog: 3000,
      provisioner: 3001,
      worker: 3002,
      embeddedPostgres: 54329,
    });
    expect(
      startOptions({
        CATALOG_PORT: '4000',
        PROVISIONER_PORT: '4001',
        WORKER_HEALTH_PORT: '4002',
        EMBEDDED_POSTGRES_PORT: '5500',
      }).ports,
    ).toEqual({ catalog: 4000, provisioner: 4001, worker: 4002, embeddedPostgres: 5500 });
    expect(() => startOptions({ CATALOG_PORT: 'http' })).toThrow(
      /CATALOG_PORT must be a port number \(1-65535\), not "http"/,
    );
  });

  it('refuses an argument it does not know instead of ignoring it', () => {
    expect(() => startOptions({}, ['--demo'])).toThrow(/unknown argument --demo/);
  });
});

/** Calls an export of scripts/lib/embedded-postgres.mjs (ESM) in node, with JSON arguments. */
function embedded(name: string, ...args: unknown[]): unknown {
  const script = `import(${JSON.stringify(EMBEDDED_MODULE)}).then(async (m) => process.stdout.write(JSON.stringify(await m[process.env.NAME](...JSON.parse(process.env.ARGS)))))`;
  const out = execFileSync(process.execPath, ['-e', script], {
    env: { ...process.env, NAME: name, ARGS: JSON.stringify(args) },
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

const closedDirectories: string[] = [];

/** A directory only its owner (root, when the suite runs as root) may enter, like /root. */
function closedDirectory(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'npm-start-closed-')));
  chmodSync(dir, 0o700);
  closedDirectories.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of closedDirectories) rmSync(dir, { recursive: true, force: true });
});

describe('npm start as root in a directory other users cannot enter (a clone under /root)', () => {
  const refusal = (dir: string, what: string) =>
    `the embedded PostgreSQL cannot start: as root it runs as the user postgres, which cannot enter ${dir} (mode 0700) to reach ${what}; run as a regular user, clone into a directory other users can enter, or set DATABASE_URL to a PostgreSQL server`;

  it('finds the first directory on the way that a user cannot search, by owner, group and other bits', () => {
    const closed = closedDirectory();
    mkdirSync(join(closed, 'inner'));
    const nobody = { uid: 65534, gid: 65534 };
    expect(embedded('firstClosedDirectory', join(closed, 'inner/postgres/bin'), nobody)).toBe(
      closed,
    );
    // Its owner may enter it; a directory not made yet is made open later.
    const owner = { uid: process.getuid!(), gid: -1 };
    expect(embedded('firstClosedDirectory', join(closed, 'inner/not-yet'), owner)).toBeNull();
    expect(embedded('firstClosedDirectory', tmpdir(), nobody)).toBeNull();
  });

  it('says why and what to do when the data directory is out of reach, only for root', () => {
    const closed = closedDirectory();
    const dataDir = join(closed, 'clone/.data/postgres');
    expect(embedded('embeddedPostgresBlocker', dataDir, { isRoot: true })).toBe(
      refusal(closed, 'its data directory'),
    );
    expect(embedded('embeddedPostgresBlocker', dataDir, { isRoot: false })).toBeNull();
    // The data directory itself is made by the package and given to the postgres user.
    expect(embedded('embeddedPostgresBlocker', closed, { isRoot: true })).toBeNull();
  });

  it('stops before building with that one line and exit code 1, instead of a spawn EACCES trace', () => {
    // A clone in a closed directory: the scripts and the lock file, dependencies already there.
    const closed = closedDirectory();
    const clone = join(closed, 'clone');
    mkdirSync(clone);
    cpSync(join(ROOT, 'scripts'), join(clone, 'scripts'), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(clone, 'package.json'));
    cpSync(join(ROOT, 'package-lock.json'), join(clone, 'package-lock.json'));
    // Older than node_modules' own lock: no npm install.
    utimesSync(join(clone, 'package-lock.json'), 0, 0);
    symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));

    const run = spawnSync(process.execPath, [join(clone, 'scripts/start.mjs')], {
      env: { PATH: process.env.PATH },
      encoding: 'utf8',
      timeout: 20_000,
    });
    // Only root is refused: any other user runs the database as itself (this suite runs as
    // root on the project's machines, where the clone under /root failed).
    if (process.getuid!() === 0) {
      expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({
        status: 1,
        stdout: `[start] ${refusal(closed, 'its data directory')}\n`,
        stderr: '',
      });
    } else {
      expect(run.stdout).not.toContain('cannot start');
    }
  });
});
