// A redis-server of our own on a free loopback port, for benchmarks and fault tests: they may
// stop and restart it at will without touching anyone else's Redis (never the shared 6379).
// Persistence as in the compose file: append-only file in `dir`.
import { ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { freePort, sleep, stopChild } from './child-process';

/** True when a Redis on this loopback port answers PING. */
export function redisPong(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    const finish = (ok: boolean) => {
      socket.destroy();
      done(ok);
    };
    socket.setTimeout(1000, () => finish(false));
    socket.on('error', () => finish(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => finish(data.toString().startsWith('+PONG')));
  });
}

export interface PrivateRedis {
  url: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts redis-server with its data in `dir`; the same dir and port again = a restart. */
export async function startPrivateRedis(options: {
  dir: string;
  port?: number;
}): Promise<PrivateRedis> {
  mkdirSync(options.dir, { recursive: true });
  const port = options.port ?? (await freePort());
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      options.dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
      '--save',
      '',
      '--protected-mode',
      'yes',
    ],
    { stdio: 'ignore' },
  );
  const deadline = Date.now() + 15_000;
  while (!(await redisPong(port))) {
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode})`);
    if (Date.now() > deadline) {
      await stopChild(child);
      throw new Error('redis-server did not start within 15 s');
    }
    await sleep(50);
  }
  return { url: `redis://127.0.0.1:${port}`, port, child, stop: () => stopChild(child) };
}
