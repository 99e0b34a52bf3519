// A real PostgreSQL high-availability cluster for the tests: Debian's etcd (one member), two
// Patroni 3.0 nodes managing PostgreSQL 15 (a primary and a streaming replica), and HAProxy in
// front, routing to whichever node answers 200 on Patroni's REST `GET /primary` (the set-up of
// Patroni's own haproxy.yml example). All on free loopback ports, files in a directory of the
// test's own; `stop()` ends every process started here. PostgreSQL refuses to run as root, so
// under root Patroni runs as the `postgres` user (as the pgbouncer helper does).
import { ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, stopChild } from '../../scripts/lib/child-process';
import { withClient } from '../../scripts/lib/pg-client';
import { poll } from './wait';

const run = promisify(execFile);

/** Debian's Python, with the packages Patroni needs (reference/stack.md). */
const PYTHON = '/usr/bin/python3';
const PATRONI = '/usr/bin/patroni';
const PATRONICTL = '/usr/bin/patronictl';
/** The newest PostgreSQL whose server binaries are installed. */
function postgresBinDir(): string {
  const versions = readdirSync('/usr/lib/postgresql')
    .filter((v) => existsSync(join('/usr/lib/postgresql', v, 'bin/postgres')))
    .sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0)
    throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql');
  return join('/usr/lib/postgresql', versions[0], 'bin');
}

/**
 * Patroni's timing, as small as its validation allows: the leader key lives `ttl` s (Patroni's
 * minimum, 20), each node's loop runs every `loop_wait` s, and a DCS call gives up after
 * `retry_timeout` s. A killed primary's key expires within `ttl`; the replica then takes over.
 */
export const PATRONI_TTL_S = 20;
const LOOP_WAIT_S = 1;
const RETRY_TIMEOUT_S = 5;
/** HAProxy asks every node's REST API this often; a node is out after two failed checks. */
const CHECK_INTERVAL_MS = 500;

export interface PatroniMember {
  name: string;
  pgPort: number;
  restPort: number;
  dataDir: string;
  configFile: string;
  child: ChildProcess | null;
}

export interface PatroniCluster {
  /**
   * `postgres://postgres@127.0.0.1:<haproxy>`: append `/<database>`. Always the current primary
   * (HAProxy with Patroni's REST check); connections to a node that stops being the primary
   * are cut (`on-marked-down shutdown-sessions`).
   */
  serverUrl: string;
  members: PatroniMember[];
  /** The leader's name as Patroni's REST API says, once a node is primary and running. */
  primary(): Promise<string>;
  /** `patronictl switchover` to the other node; resolves once it leads and HAProxy routes to it. */
  switchover(): Promise<{ from: string; to: string }>;
  /** SIGKILLs the primary's Patroni and PostgreSQL (a node that dies); returns its name. */
  killPrimary(): Promise<string>;
  /** Waits until a node other than `name` leads and a write through HAProxy succeeds. */
  awaitPrimaryOtherThan(name: string, timeoutMs: number): Promise<string>;
  /** Starts a killed node's Patroni again (it rejoins as a replica, rewound if need be). */
  restart(name: string): Promise<void>;
  /** Waits until every node runs and the replica streams from the primary. */
  awaitHealthy(timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

/** The uid and gid of `postgres`, when this process runs as root. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }));
  return { uid: id('-u'), gid: id('-g') };
}

function patroniConfig(
  scope: string,
  member: PatroniMember,
  etcdPort: number,
  dir: string,
  binDir: string,
): string {
  // JSON is YAML: no YAML writer needed.
  return JSON.stringify({
    scope,
    name: member.name,
    restapi: {
      listen: `127.0.0.1:${member.restPort}`,
      connect_address: `127.0.0.1:${member.restPort}`,
    },
    etcd3: { hosts: `127.0.0.1:${etcdPort}` },
    bootstrap: {
      dcs: {
        ttl: PATRONI_TTL_S,
        loop_wait: LOOP_WAIT_S,
        retry_timeout: RETRY_TIMEOUT_S,
        maximum_lag_on_failover: 1024 * 1024,
        // A commit is acknowledged once the replica has it, and Patroni promotes only that
        // synchronous standby: a killed primary loses no acknowledged write.
        synchronous_mode: true,
        postgresql: {
          use_pg_rewind: true,
          parameters: { wal_log_hints: 'on', max_connections: 200 },
        },
      },
      initdb: [{ encoding: 'UTF8' }, { auth: 'trust' }],
      pg_hba: [
        'local all all trust',
        'host all all 127.0.0.1/32 trust',
        'host replication all 127.0.0.1/32 trust',
      ],
    },
    postgresql: {
      listen: `127.0.0.1:${member.pgPort}`,
      connect_address: `127.0.0.1:${member.pgPort}`,
      data_dir: member.dataDir,
      bin_dir: binDir,
      pgpass: join(dir, `pgpass-${member.name}`),
      authentication: {
        superuser: { username: 'postgres' },
        replication: { username: 'postgres' },
        rewind: { username: 'postgres' },
      },
      parameters: { unix_socket_directories: dir, fsync: 'off', synchronous_commit: 'on' },
    },
  });
}

function haproxyConfig(port: number, members: PatroniMember[]): string {
  return [
    'global',
    '  maxconn 1000',
    'defaults',
    '  mode tcp',
    '  timeout connect 2s',
    '  timeout client 30m',
    '  timeout server 30m',
    '  timeout check 1s',
    'listen primary',
    `  bind 127.0.0.1:${port}`,
    '  option httpchk GET /primary',
    '  http-check expect status 200',
    `  default-server inter ${CHECK_INTERVAL_MS} fall 2 rise 1 on-marked-down shutdown-sessions`,
    ...members.map(
      (m) => `  server ${m.name} 127.0.0.1:${m.pgPort} maxconn 500 check port ${m.restPort}`,
    ),
    '',
  ].join('\n');
}

/** A child whose output is kept (the last 20 kB) for the error that says why it failed. */
function spawnLogged(command: string, args: string[], options: Parameters<typeof spawn>[2] = {}) {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => {
    // Patroni's REST server logs a traceback whenever a health check hangs up before reading
    // the whole answer (HAProxy does): noise that would push out the lines that say why.
    const lines = chunk
      .toString()
      .split('\n')
      .filter((line) => /^\d{4}-\d\d-\d\d /.test(line) && !line.includes('Exception happened'));
    if (lines.length > 0) output = (output + lines.join('\n') + '\n').slice(-20_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  return { child, output: () => output };
}

async function httpStatus(url: string): Promise<number> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

interface ClusterView {
  members: { name: string; role: string; state: string; lag?: number | string }[];
}

/** Starts etcd, both Patroni nodes (the first bootstraps, the second clones it) and HAProxy. */
export async function startPatroniCluster(dir: string): Promise<PatroniCluster> {
  for (const command of [PATRONI, PATRONICTL, '/usr/bin/etcd', '/usr/sbin/haproxy'])
    if (!existsSync(command))
      throw new Error(`${command} is missing (apt-get install patroni etcd-server haproxy)`);
  mkdirSync(dir, { recursive: true });
  const user = runAs();
  const owned = (path: string) => {
    if (user) chownSync(path, user.uid, user.gid);
  };
  chmodSync(dir, 0o755);
  owned(dir);
  const binDir = postgresBinDir();
  const scope = `test-${process.pid}-${Date.now().toString(36)}`;
  const started: ChildProcess[] = [];

  const etcdPort = await freePort();
  const etcdPeerPort = await freePort();
  const etcd = spawnLogged('/usr/bin/etcd', [
    '--name=etcd0',
    `--data-dir=${join(dir, 'etcd')}`,
    `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
    `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
    `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
    `--initial-cluster=etcd0=http://127.0.0.1:${etcdPeerPort}`,
  ]);
  started.push(etcd.child);

  const members: PatroniMember[] = [];
  for (const name of ['pg0', 'pg1']) {
    const member: PatroniMember = {
      name,
      pgPort: await freePort(),
      restPort: await freePort(),
      dataDir: join(dir, name),
      configFile: join(dir, `${name}.yml`),
      child: null,
    };
    writeFileSync(member.configFile, patroniConfig(scope, member, etcdPort, dir, binDir), {
      mode: 0o644,
    });
    owned(member.configFile);
    members.push(member);
  }
  const logs = new Map<string, () => string>();
  const startMember = (member: PatroniMember) => {
    const patroni = spawnLogged(PYTHON, [PATRONI, member.configFile], {
      ...user,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
    });
    member.child = patroni.child;
    logs.set(member.name, patroni.output);
    started.push(patroni.child);
  };

  const haproxyPort = await freePort();
  const haproxyFile = join(dir, 'haproxy.cfg');
  writeFileSync(haproxyFile, haproxyConfig(haproxyPort, members));
  const serverUrl = `postgres://postgres@127.0.0.1:${haproxyPort}`;

  const view = async (): Promise<ClusterView | undefined> => {
    for (const member of members) {
      try {
        const res = await fetch(`http://127.0.0.1:${member.restPort}/cluster`, {
          signal: AbortSignal.timeout(1000),
        });
        if (res.ok) return (await res.json()) as ClusterView;
      } catch {
        // that node is down: ask the next
      }
    }
    return undefined;
  };
  const leader = async () => {
    const exited = members.find((m) => m.child !== null && m.child.exitCode !== null);
    if (exited) throw new Error(`patroni ${exited.name} exited (${exited.child?.exitCode})`);
    return (await view())?.members.find((m) => m.role === 'leader' && m.state === 'running')?.name;
  };
  const failure = (what: string) =>
    new Error(
      `${what}\n--- etcd\n${etcd.output().slice(-2000)}\n` +
        members
          .map((m) => `--- ${m.name}\n${(logs.get(m.name)?.() ?? '').slice(-4000)}`)
          .join('\n'),
    );
  /** HAProxy routes to a node that takes writes (not a replica it has not dropped yet). */
  const writable = () =>
    withClient(`${serverUrl}/postgres`, async (client) => {
      const { rows } = await client.query<{ recovery: boolean }>(
        'SELECT pg_is_in_recovery() AS recovery',
      );
      return !rows[0].recovery;
    }).catch(() => false);
  const awaitPrimaryOtherThan = async (name: string, timeoutMs: number): Promise<string> => {
    try {
      return await poll(
        async () => {
          const now = await leader();
          if (now === undefined || now === name) return undefined;
          return (await writable()) ? now : undefined;
        },
        `a primary other than ${name}`,
        timeoutMs,
        100,
      );
    } catch (error) {
      throw failure((error as Error).message);
    }
  };
  const awaitHealthy = async (timeoutMs: number): Promise<void> => {
    try {
      await poll(
        async () => {
          const cluster = await view();
          const lead = cluster?.members.find((m) => m.role === 'leader' && m.state === 'running');
          // The replica is the synchronous standby again: only then may it be promoted.
          const standby = cluster?.members.find(
            (m) => m.role === 'sync_standby' && (m.state === 'running' || m.state === 'streaming'),
          );
          return lead && standby && (await writable()) ? true : undefined;
        },
        'a primary behind HAProxy and its synchronous standby',
        timeoutMs,
        200,
      );
    } catch (error) {
      throw failure((error as Error).message);
    }
  };

  const stop = async () => {
    for (const child of [...started].reverse()) await stopChild(child, 10_000);
    // A node whose Patroni was killed leaves its PostgreSQL running: end that too.
    for (const member of members) killPostmaster(member);
  };

  /** Polls until `check` holds; a time-out's error carries the processes' logs. */
  const explained = (check: () => Promise<boolean>, what: string, timeoutMs: number) =>
    poll(async () => ((await check()) ? true : undefined), what, timeoutMs, 100).catch(
      (error: Error) => {
        throw failure(error.message);
      },
    );
  try {
    await explained(
      async () => (await httpStatus(`http://127.0.0.1:${etcdPort}/health`)) === 200,
      'etcd',
      15_000,
    );
    startMember(members[0]);
    const haproxy = spawnLogged('/usr/sbin/haproxy', ['-db', '-f', haproxyFile]);
    started.push(haproxy.child);
    await explained(
      async () => (await leader()) !== undefined,
      'pg0 to bootstrap and lead',
      60_000,
    );
    startMember(members[1]);
    await awaitHealthy(60_000);
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    serverUrl,
    members,
    primary: async () =>
      poll(leader, 'the cluster to name its primary', 30_000, 100).catch((error: Error) => {
        throw failure(error.message);
      }),
    async switchover() {
      const from = await poll(leader, 'a primary', 30_000, 100);
      const to = members.find((m) => m.name !== from)!.name;
      await run(
        PYTHON,
        [
          PATRONICTL,
          '-c',
          members[0].configFile,
          'switchover',
          '--leader',
          from,
          '--candidate',
          to,
          '--force',
        ],
        {
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
          timeout: 60_000,
        },
      ).catch((error: Error & { stdout?: string; stderr?: string }) => {
        throw failure(
          `patronictl switchover failed: ${error.message} ${error.stdout ?? ''} ${error.stderr ?? ''}`,
        );
      });
      await awaitPrimaryOtherThan(from, 60_000);
      return { from, to };
    },
    async killPrimary() {
      const name = await poll(leader, 'a primary', 30_000, 100);
      const member = members.find((m) => m.name === name)!;
      member.child?.kill('SIGKILL');
      killPostmaster(member);
      return name;
    },
    awaitPrimaryOtherThan,
    async restart(name) {
      const member = members.find((m) => m.name === name)!;
      if (member.child && member.child.exitCode === null && member.child.signalCode === null)
        throw new Error(`${name} still runs`);
      startMember(member);
    },
    awaitHealthy,
    stop,
  };
}

/** SIGKILLs a node's PostgreSQL (postmaster.pid's first line); its backends end with it. */
function killPostmaster(member: PatroniMember): void {
  const pidFile = join(member.dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
