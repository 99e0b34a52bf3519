// Redis past one server, for the tests: a Sentinel set (a primary, a replica, three Sentinels)
// and a three-primary Cluster, each a set of real Debian `redis-server` / `redis-sentinel`
// processes on free loopback ports with their files in a directory of the test's own. They
// never touch the machine's shared Redis; `stop()` ends every process they started.
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Redis from 'ioredis';
import { freePort, freePortWithCompanion, stopChild } from '../../scripts/lib/child-process';
import { poll, until } from './wait';

const run = promisify(execFile);
const START_MS = 15_000;
/** A Redis Cluster node's bus port is its port plus this. */
const CLUSTER_BUS_OFFSET = 10_000;

/** `redis-sentinel` where Debian's package is installed, else redis-server's own Sentinel mode. */
const SENTINEL_COMMAND = existsSync('/usr/bin/redis-sentinel')
  ? { command: 'redis-sentinel', args: [] as string[] }
  : { command: 'redis-server', args: ['--sentinel'] };

interface RedisNode {
  port: number;
  child: ChildProcess;
}

/** Sends one command to a loopback server with a connection of its own; null when it fails. */
export async function redisCommand(
  port: number,
  args: string[],
  password?: string,
): Promise<unknown> {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    password,
    lazyConnect: true,
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await client.call(args[0], ...args.slice(1));
  } catch {
    return null;
  } finally {
    client.disconnect();
  }
}

function startProcess(command: string, args: string[], port: number, password?: string) {
  const child = spawn(command, args, { stdio: 'ignore' });
  return poll(
    async () => {
      if (child.exitCode !== null)
        throw new Error(`${command} on ${port} exited (${child.exitCode})`);
      return (await redisCommand(port, ['PING'], password)) === 'PONG' ? child : undefined;
    },
    `${command} on port ${port}`,
    START_MS,
    50,
  );
}

/** A data node: append-only file on (a restart keeps what it had), no snapshots. */
async function startDataNode(
  dir: string,
  port: number,
  password: string | undefined,
  extra: string[],
): Promise<RedisNode> {
  mkdirSync(dir, { recursive: true });
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--appendonly',
    'yes',
    '--appendfsync',
    'always',
    '--save',
    '',
    ...(password ? ['--requirepass', password, '--masterauth', password] : []),
    ...extra,
  ];
  return { port, child: await startProcess('redis-server', args, port, password) };
}

/**
 * A node of the Sentinel set: as docs/operations.md advises, a primary refuses writes without a
 * replica in sync, so a primary cut off by a failover takes no write the new one never sees.
 */
function startSetNode(
  dir: string,
  port: number,
  password: string | undefined,
  extra: string[],
): Promise<RedisNode> {
  const fenced = ['--min-replicas-to-write', '1', '--min-replicas-max-lag', '10'];
  return startDataNode(dir, port, password, [...fenced, ...extra]);
}

export interface SentinelSetOptions {
  dir: string;
  /** The primary's name in the Sentinels' configuration. */
  name?: string;
  /** Password of the data nodes (requirepass, masterauth). */
  password?: string;
  /** Password of the Sentinels themselves. */
  sentinelPassword?: string;
  /** How long the primary may be silent before the Sentinels start a failover. */
  downAfterMs?: number;
}

export interface SentinelSet {
  name: string;
  /** REDIS_SENTINELS for the provisioner. */
  sentinels: string;
  sentinelPorts: number[];
  /** The port the Sentinels name as the primary now. */
  primaryPort(): Promise<number>;
  /** SENTINEL FAILOVER, then waits until every Sentinel names the new primary and it accepts writes. */
  failover(): Promise<{ from: number; to: number }>;
  /** SIGKILLs the current primary (its replica is promoted by the Sentinels); returns its port. */
  killPrimary(): Promise<number>;
  /** Waits until the Sentinels name a primary other than `port` that accepts writes. */
  awaitPrimaryOtherThan(port: number, timeoutMs: number): Promise<number>;
  /** Stops both data nodes (SIGTERM: their append-only files are complete). */
  stopDataNodes(): Promise<void>;
  /** Starts both data nodes again on their ports and files: `primaryPort` as the primary. */
  startDataNodes(primaryPort: number): Promise<void>;
  /** Starts a killed node again, as a replica of the current primary. */
  restartAsReplica(port: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A primary, its replica and three Sentinels (quorum 2). Each Sentinel is told of the replica
 * and of the other Sentinels in its file, so the set is whole at once instead of after the
 * Sentinels' discovery rounds (10 s).
 */
export async function startSentinelSet(options: SentinelSetOptions): Promise<SentinelSet> {
  const name = options.name ?? 'queue-primary';
  const { password, sentinelPassword } = options;
  const downAfter = options.downAfterMs ?? 1000;
  const nodes = new Map<number, RedisNode>();
  const sentinels: RedisNode[] = [];
  const stopAll = async () => {
    await Promise.all([...sentinels, ...nodes.values()].map((n) => stopChild(n.child, 3000)));
  };
  try {
    const [primary, replica] = [await freePort(), await freePort()];
    const nodeDir = (port: number) => join(options.dir, `redis-${port}`);
    nodes.set(primary, await startSetNode(nodeDir(primary), primary, password, []));
    nodes.set(
      replica,
      await startSetNode(nodeDir(replica), replica, password, [
        '--replicaof',
        '127.0.0.1',
        String(primary),
      ]),
    );
    await until(
      async () =>
        String(await redisCommand(replica, ['INFO', 'replication'], password)).includes(
          'master_link_status:up',
        ),
      'the replica to sync with the primary',
      START_MS,
      50,
    );
    const ports = [await freePort(), await freePort(), await freePort()];
    const ids = ports.map(() => randomBytes(20).toString('hex'));
    for (const [i, port] of ports.entries()) {
      const dir = join(options.dir, `sentinel-${port}`);
      mkdirSync(dir, { recursive: true });
      const file = join(dir, 'sentinel.conf');
      writeFileSync(
        file,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel myid ${ids[i]}`,
          ...(sentinelPassword ? [`requirepass ${sentinelPassword}`] : []),
          `sentinel monitor ${name} 127.0.0.1 ${primary} 2`,
          ...(password ? [`sentinel auth-pass ${name} ${password}`] : []),
          ...(sentinelPassword ? [`sentinel sentinel-pass ${sentinelPassword}`] : []),
          `sentinel down-after-milliseconds ${name} ${downAfter}`,
          `sentinel failover-timeout ${name} ${Math.max(3000, downAfter * 3)}`,
          `sentinel parallel-syncs ${name} 1`,
          `sentinel known-replica ${name} 127.0.0.1 ${replica}`,
          ...ports.flatMap((other, j) =>
            j === i ? [] : [`sentinel known-sentinel ${name} 127.0.0.1 ${other} ${ids[j]}`],
          ),
          '',
        ].join('\n'),
      );
      sentinels.push({
        port,
        child: await startProcess(
          SENTINEL_COMMAND.command,
          [file, ...SENTINEL_COMMAND.args],
          port,
          sentinelPassword,
        ),
      });
    }
    const ask = (port: number, args: string[]) => redisCommand(port, args, sentinelPassword);
    const namedPrimary = async (port: number): Promise<number | undefined> => {
      const answer = (await ask(port, ['SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name])) as
        [string, string] | null;
      return answer ? Number(answer[1]) : undefined;
    };
    const writable = async (port: number) =>
      String(await redisCommand(port, ['INFO', 'replication'], password)).includes('role:master');
    const agreedPrimary = async (): Promise<number | undefined> => {
      const named = await Promise.all(ports.map(namedPrimary));
      const port = named[0];
      return port !== undefined && named.every((p) => p === port) && (await writable(port))
        ? port
        : undefined;
    };
    const awaitPrimaryOtherThan = (port: number, timeoutMs: number) =>
      poll(
        async () => {
          const now = await agreedPrimary();
          return now !== undefined && now !== port ? now : undefined;
        },
        `a primary other than ${port}`,
        timeoutMs,
        50,
      );
    // A failover needs the Sentinels to see the replica as healthy: wait until each does.
    await until(
      async () =>
        (
          await Promise.all(
            ports.map(async (port) => {
              const replicas = (await ask(port, ['SENTINEL', 'REPLICAS', name])) as
                string[][] | null;
              return (replicas ?? []).some(
                (fields) => fields.includes('slave') && !fields.join(' ').includes('disconnected'),
              );
            }),
          )
        ).every(Boolean),
      'every Sentinel to know the replica',
      START_MS,
      100,
    );
    const primaryPort = () =>
      poll(agreedPrimary, 'the Sentinels to agree on a primary', START_MS, 50);
    return {
      name,
      sentinels: ports.map((port) => `127.0.0.1:${port}`).join(','),
      sentinelPorts: ports,
      primaryPort,
      async failover() {
        const from = await primaryPort();
        // Refused while a previous failover is still settling ("INPROG"): asked again until taken.
        await poll(
          async () =>
            (await ask(ports[0], ['SENTINEL', 'FAILOVER', name])) === 'OK' ? true : undefined,
          'the Sentinels to accept a failover',
          START_MS,
          200,
        );
        const to = await awaitPrimaryOtherThan(from, 30_000);
        // Done when the old primary has been turned into the new one's replica (the Sentinels
        // then close its clients' connections, which reconnect to the new primary).
        await until(
          async () => {
            const info = String(await redisCommand(from, ['INFO', 'replication'], password));
            return info.includes('role:slave') && info.includes(`master_port:${to}`);
          },
          `the old primary ${from} to follow ${to}`,
          30_000,
          100,
        );
        return { from, to };
      },
      async killPrimary() {
        const port = await primaryPort();
        const node = nodes.get(port)!;
        node.child.kill('SIGKILL');
        await new Promise((done) =>
          node.child.exitCode !== null || node.child.signalCode !== null
            ? done(null)
            : node.child.once('exit', done),
        );
        return port;
      },
      awaitPrimaryOtherThan,
      async stopDataNodes() {
        await Promise.all([...nodes.values()].map((n) => stopChild(n.child, 5000)));
      },
      async startDataNodes(primaryAt: number) {
        const other = [...nodes.keys()].find((p) => p !== primaryAt)!;
        nodes.set(primaryAt, await startSetNode(nodeDir(primaryAt), primaryAt, password, []));
        nodes.set(
          other,
          await startSetNode(nodeDir(other), other, password, [
            '--replicaof',
            '127.0.0.1',
            String(primaryAt),
          ]),
        );
      },
      async restartAsReplica(port: number) {
        const primaryNow = await primaryPort();
        nodes.set(
          port,
          await startSetNode(nodeDir(port), port, password, [
            '--replicaof',
            '127.0.0.1',
            String(primaryNow),
          ]),
        );
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

export interface RedisCluster {
  /** REDIS_CLUSTER_NODES for the provisioner. */
  nodes: string;
  ports: number[];
  stop(): Promise<void>;
}

/** Three primaries, no replicas, every slot assigned by `redis-cli --cluster create`. */
export async function startRedisCluster(options: {
  dir: string;
  password?: string;
}): Promise<RedisCluster> {
  const started: RedisNode[] = [];
  const stop = async () => {
    await Promise.all(started.map((n) => stopChild(n.child, 3000)));
  };
  try {
    // Each node binds its cluster bus too, on its port + 10000.
    const ports: number[] = [];
    for (let i = 0; i < 3; i++) ports.push(await freePortWithCompanion(CLUSTER_BUS_OFFSET));
    for (const port of ports) {
      const dir = join(options.dir, `cluster-${port}`);
      started.push(
        await startDataNode(dir, port, options.password, [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, 'nodes.conf'),
          '--cluster-node-timeout',
          '2000',
        ]),
      );
    }
    await run(
      'redis-cli',
      [
        ...(options.password ? ['-a', options.password, '--no-auth-warning'] : []),
        '--cluster',
        'create',
        ...ports.map((port) => `127.0.0.1:${port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { timeout: START_MS },
    );
    await until(
      async () =>
        (
          await Promise.all(
            ports.map(async (port) =>
              String(await redisCommand(port, ['CLUSTER', 'INFO'], options.password)).includes(
                'cluster_state:ok',
              ),
            ),
          )
        ).every(Boolean),
      'the cluster to be ok on every node',
      START_MS,
      100,
    );
    return { nodes: ports.map((port) => `127.0.0.1:${port}`).join(','), ports, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
