import { ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { entryCommand, freePort } from '../support/app-process';
import { PAYLOAD_DIR } from '../../apps/provisioner/src/sources/source-system';
import { poll, until } from '../support/wait';

const ROOT = join(__dirname, '../..');
const OPERATOR_BROKER_KEY = 'operator-broker-key-0123456789abcdef0123456789';
/** Starting everything: the embedded PostgreSQL's initdb, migrations, demo data, three processes (and a build when dist/ is stale, as outside CI). */
const START_MS = 600_000;
/** Stopping: each service drains (npm start kills one after 15 s), then the embedded PostgreSQL stops. */
const STOP_MS = 90_000;

/**
 * The first hour on `npm start`, as a newcomer runs it (issue: the whole journey in the demo):
 * the real scripts/start.mjs with its embedded PostgreSQL, the demo researcher's journey from a
 * deposit to verified bytes through `npm run drs`, the catalog CLI beside it, and how it ends:
 * a service's death is said and stops everything; a SIGKILL of npm start ends its children.
 * Everything it writes goes to a directory of its own (START_DATA_DIR, SOURCES, STORAGE_ROOT).
 */
describe('npm start: the first hour', () => {
  const dir = mkdtempSync(join(tmpdir(), 'npm-start-journey-'));
  // As root the embedded PostgreSQL runs as the user postgres, which must reach its data.
  chmodSync(dir, 0o755);
  const dataDir = join(dir, 'data');
  const dropzone = join(dir, 'dropzone');
  let env: NodeJS.ProcessEnv;
  let start: Started;
  let ports: Record<string, number>;

  interface Started {
    child: ChildProcess;
    output: () => string;
    exited: Promise<number | null>;
  }
  const state = () =>
    JSON.parse(readFileSync(join(dataDir, 'npm-start.json'), 'utf8')) as {
      catalog_url: string;
      provisioner_url: string;
      catalog_database_url: string;
      demo_researcher: string;
      processes: Record<string, number>;
    };
  const keys = () =>
    JSON.parse(readFileSync(join(dataDir, 'local-keys.json'), 'utf8')) as Record<string, string>;
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  async function startNpmStart(): Promise<Started> {
    let out = '';
    const child = spawn(process.execPath, [join(ROOT, 'scripts/start.mjs')], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const started = { child, output: () => out, exited };
    await poll(
      () => {
        if (child.exitCode !== null) throw new Error(`npm start exited:\n${out.slice(-4000)}`);
        return out.includes('Ctrl-C stops everything.') ? true : undefined;
      },
      'npm start to be up',
      START_MS,
      200,
    );
    return started;
  }

  /** `npm run drs -- <args>` as a user runs it (node scripts/drs.mjs), in `cwd`. */
  const drs = (args: string[], extraEnv: NodeJS.ProcessEnv = {}, cwd = dir) =>
    promisify(execFile)(process.execPath, [join(ROOT, 'scripts/drs.mjs'), ...args], {
      cwd,
      env: { ...env, ...extraEnv },
      encoding: 'utf8',
      timeout: 60_000,
    });

  beforeAll(async () => {
    ports = {
      CATALOG_PORT: await freePort(),
      PROVISIONER_PORT: await freePort(),
      WORKER_HEALTH_PORT: await freePort(),
      EMBEDDED_POSTGRES_PORT: await freePort(),
    };
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
      START_DATA_DIR: dataDir,
      SOURCES: JSON.stringify([{ name: 'dropzone', type: 'dropzone', root: dropzone }]),
      STORAGE_ROOT: join(dir, 'storage'),
      LOG_LEVEL: 'warn',
      // An operator's passport broker, configured the documented way: npm start keeps it.
      GA4GH_BROKER_API_KEY_SHA256: createHash('sha256').update(OPERATOR_BROKER_KEY).digest('hex'),
    };
    start = await startNpmStart();
  }, START_MS + 60_000);

  afterAll(async () => {
    if (start?.child.exitCode === null && start.child.signalCode === null) {
      start.child.kill('SIGTERM');
      // A stop that hangs is a failure of its own; its processes still end (they watch npm start).
      const kill = setTimeout(() => start.child.kill('SIGKILL'), STOP_MS);
      await start.exited;
      clearTimeout(kill);
    }
    rmSync(dir, { recursive: true, force: true });
  }, STOP_MS * 2);

  it('prints the docs, the dashboard, the metrics, DCAT, the database and the demo researcher', async () => {
    const banner = start.output();
    const catalog = `http://localhost:${ports.CATALOG_PORT}`;
    const provisioner = `http://localhost:${ports.PROVISIONER_PORT}`;
    for (const line of [
      `${catalog}/api/docs`,
      `${catalog}/metrics`,
      `${provisioner}/docs`,
      `${provisioner}/admin/queues`,
      `${catalog}/api/dcat`,
      `postgres://`,
      'subject demo-oidc-rita-researcher',
      'npm run drs -- get <drs_uri>',
    ]) {
      expect(banner).toContain(line);
    }
    // The operator's broker reads visas beside npm start's own (the provisioner's) key.
    const visas = await fetch(
      `${state().catalog_url}/api/ga4gh/permissions/${state().demo_researcher}`,
      { headers: { 'X-API-Key': OPERATOR_BROKER_KEY } },
    );
    expect(visas.status).toBe(200);
    // DCAT is on, with the demo publisher; GET / names each service's docs.
    const dcat = await fetch(`${state().catalog_url}/api/dcat`, {
      headers: { accept: 'text/turtle' },
    });
    expect(dcat.status).toBe(200);
    expect(await dcat.text()).toContain('Demo Institute');
    for (const [url, docs] of [
      [state().catalog_url, '/api/docs'],
      [state().provisioner_url, '/docs'],
    ]) {
      const home = (await (await fetch(`${url}/`)).json()) as { links: { docs: string } };
      expect(home.links.docs).toBe(docs);
    }
  });

  it('takes the demo researcher from a deposit to verified bytes with `npm run drs`', async () => {
    const write = keys().PROVISIONER_API_KEY;
    // npm start runs in archive mode: the bytes below travel encrypted, decrypted by the CLI.
    const recipient = await fetch(`${state().provisioner_url}/.well-known/c4gh-recipient`);
    expect(recipient.status).toBe(200);
    expect(await recipient.text()).toMatch(/^-----BEGIN CRYPT4GH PUBLIC KEY-----/);
    const queued = await fetch(`${state().provisioner_url}/datasets/dropzone/import`, {
      method: 'POST',
      headers: { 'X-API-Key': write, 'Content-Type': 'application/json' },
      body: JSON.stringify({ dataset_id: 'ELX-DS-0001' }),
    });
    expect(queued.status).toBe(202);
    const location = queued.headers.get('location')!;
    expect(location).toMatch(/^\/imports\//);
    const drsUri = await poll(
      async () => {
        const record = (await (
          await fetch(`${state().provisioner_url}${location}`, { headers: { 'X-API-Key': write } })
        ).json()) as { state: string; catalog: { state: string; drs_uri?: string } | null };
        if (record.state === 'failed') throw new Error(JSON.stringify(record));
        return record.catalog?.state === 'registered' ? record.catalog.drs_uri : undefined;
      },
      'the import to be registered in the catalog',
      120_000,
      250,
    );
    expect(drsUri).toMatch(/^drs:\/\//);

    // No flags: the demo researcher. The dataset's object is its manifest, naming each file.
    const manifest = await drs(['get', drsUri!, '--out', join(dir, 'manifest.json')]);
    expect(manifest.stderr).toContain('acting as the demo researcher demo-oidc-rita-researcher');
    expect(manifest.stderr).toMatch(/SHA-256 [0-9a-f]{64} verified/);
    const objects = (
      JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
        objects: { id: string; path: string }[];
      }
    ).objects;
    const readme = objects.find((o) => o.path === 'README.txt')!;
    const host = new URL(state().provisioner_url).host;
    expect(manifest.stderr).toContain(`drs://${host}/${readme.id}`);
    // A file, kept under its own name where the user typed the command: npm runs the script in
    // the repository's root (here a directory of its own) and names that directory INIT_CWD.
    const checkout = mkdtempSync(join(tmpdir(), 'drs-npm-root-'));
    await drs(
      ['get', `drs://${host}/${readme.id}`],
      { npm_lifecycle_event: 'drs', INIT_CWD: dir },
      checkout,
    );
    const deposited = readFileSync(
      join(dropzone, 'datasets/ELX-DS-0001', PAYLOAD_DIR, 'README.txt'),
    ).toString();
    expect(readFileSync(join(dir, 'README.txt'), 'utf8')).toBe(deposited);
    expect(readdirSync(checkout)).toEqual([]);
    rmSync(checkout, { recursive: true });
    // Never over an existing file.
    await expect(drs(['get', `drs://${host}/${readme.id}`])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('exists: nothing overwritten'),
    });

    // Against another deployment: a passport (here one visa) given, nothing of npm start read.
    const visas = (await (
      await fetch(`${state().catalog_url}/api/ga4gh/permissions/${state().demo_researcher}`, {
        headers: { 'X-API-Key': keys().GLOBAL_API_KEY },
      })
    ).json()) as { ga4gh_passport_v1: string[] };
    writeFileSync(join(dir, 'visa.jwt'), visas.ga4gh_passport_v1[0]);
    const other = join(dir, 'elsewhere');
    const given = await drs(
      ['get', `drs://${host}/${readme.id}`, '--passport', join(dir, 'visa.jwt'), '--out', other],
      { START_DATA_DIR: join(dir, 'no-npm-start') },
    );
    expect(given.stderr).not.toContain('demo researcher');
    expect(readFileSync(other, 'utf8')).toBe(deposited);
    // Without credentials and without npm start: told what to give.
    await expect(
      drs(['get', `drs://${host}/${readme.id}`, '--out', join(dir, 'x')], {
        START_DATA_DIR: join(dir, 'no-npm-start'),
      }),
    ).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('--passport or --token') });
  });

  it("runs the catalog CLI on npm start's embedded database without DATABASE_URL", async () => {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [...entryCommand('catalog-api', 'src/cli/catalog.cli').args, 'audit'],
      { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 },
    );
    expect(stderr).toContain(
      `using the embedded database of the running npm start (${state().catalog_database_url})`,
    );
    expect(JSON.parse(stdout)).toBeDefined();
  });

  it(
    "says a service's death, and stops everything with exit code 1",
    async () => {
      const { processes } = state();
      process.kill(processes['provisioner-worker'], 'SIGKILL');
      expect(await start.exited).toBe(1);
      expect(start.output()).toMatch(
        /\[start\] provisioner-worker DIED: killed by SIGKILL \(the out-of-memory killer, or a kill -9; its heap cap is 384 MiB\); stopping everything/,
      );
      for (const pid of Object.values(processes)) expect(alive(pid)).toBe(false);
    },
    STOP_MS,
  );

  it(
    'ends its children when it is killed itself (SIGKILL)',
    async () => {
      start = await startNpmStart();
      const { processes } = state();
      start.child.kill('SIGKILL');
      await start.exited;
      await until(
        () => Object.values(processes).every((pid) => !alive(pid)),
        "npm start's children to end after its SIGKILL",
        STOP_MS,
        100,
      );
      // The ports are free again: the next npm start can listen.
      start = await startNpmStart();
    },
    START_MS,
  );
});
