// A PgBouncer of our own (Debian's `pgbouncer`) on a free loopback port, in front of a PostgreSQL
// server, for the tests and the benchmarks: the catalog run the way a platform team runs it.
// PgBouncer refuses to run as root, so under root it runs as the `postgres` user.
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, sleep, stopChild } from './child-process';
import { postgresAnswersAt } from './pg-client';

export type PoolMode = 'session' | 'transaction' | 'statement';

export interface PrivatePgBouncer {
  /** `postgres://postgres@127.0.0.1:<port>`: append `/<database>` (any database of the server). */
  serverUrl: string;
  port: number;
  child: ChildProcess;
  /** What PgBouncer logged (it logs to stderr in the foreground). */
  output(): string;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** The PostgreSQL server behind it, without a database (`postgres://user[:pw]@host:port`). */
  postgresServerUrl: string;
  poolMode?: PoolMode;
  /** Server connections per database (`default_pool_size`). */
  poolSize?: number;
  /** More `[pgbouncer]` settings, e.g. `{ server_round_robin: '1' }`. */
  settings?: Record<string, string>;
}

/** The uid and gid of `postgres`, when this process runs as root (PgBouncer refuses root). */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }));
  return { uid: id('-u'), gid: id('-g') };
}

/** A value of pgbouncer.ini's connection strings: quoted, with `'` doubled. */
const quoted = (value: string) => `'${value.replace(/'/g, "''")}'`;

/**
 * The configuration a platform team would write (docs/operations.md shows it), with two test
 * conveniences: any database of the server through the `*` entry as the server's user
 * (`auth_type = any`), and idle server connections closed after 5 s, so the many short-lived test
 * databases never pile up connections on a shared server. `ignore_startup_parameters` is left
 * empty on purpose: a client sending one PgBouncer does not know is refused, as in production.
 */
function configuration(options: PgBouncerOptions, port: number): string {
  const server = new URL(options.postgresServerUrl);
  const target = [
    `host=${server.hostname}`,
    `port=${server.port || '5432'}`,
    `user=${decodeURIComponent(server.username || 'postgres')}`,
    ...(server.password ? [`password=${quoted(decodeURIComponent(server.password))}`] : []),
    `connect_query=${quoted('SET statement_timeout = 30000')}`,
  ].join(' ');
  const settings: Record<string, string> = {
    listen_addr: '127.0.0.1',
    listen_port: String(port),
    unix_socket_dir: '',
    auth_type: 'any',
    pool_mode: options.poolMode ?? 'transaction',
    default_pool_size: String(options.poolSize ?? 10),
    max_client_conn: '1000',
    server_idle_timeout: '5',
    server_login_retry: '1',
    logfile: '',
    pidfile: '',
    ...options.settings,
  };
  return [
    '[databases]',
    `* = ${target}`,
    '[pgbouncer]',
    ...Object.entries(settings).map(([key, value]) => `${key} = ${value}`),
    '',
  ].join('\n');
}

/** Starts PgBouncer and resolves once a query goes through it. */
export async function startPrivatePgBouncer(options: PgBouncerOptions): Promise<PrivatePgBouncer> {
  // Its configuration, in a directory of its own under the system's temporary one (which every
  // user may enter: the `postgres` user must read the file), removed when it stops.
  const dir = mkdtempSync(join(tmpdir(), 'pgbouncer-'));
  chmodSync(dir, 0o755);
  const port = await freePort();
  const file = join(dir, 'pgbouncer.ini');
  writeFileSync(file, configuration(options, port), { mode: 0o644 });
  const child = spawn('pgbouncer', [file], { ...runAs(), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  await new Promise<void>((done, fail) => {
    child.once('spawn', done);
    child.once('error', (error) => {
      rmSync(dir, { recursive: true, force: true });
      fail(new Error(`cannot run pgbouncer (apt-get install pgbouncer): ${error.message}`));
    });
  });
  const serverUrl = `postgres://postgres@127.0.0.1:${port}`;
  const stop = async () => {
    await stopChild(child, 5_000);
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 15_000;
  while (!(await postgresAnswersAt(`${serverUrl}/postgres`, 1000))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`pgbouncer did not start (exit ${child.exitCode}):\n${output}`);
    }
    await sleep(50);
  }
  return { serverUrl, port, child, output: () => output, stop };
}
