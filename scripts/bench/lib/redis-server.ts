import { ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { freePort, sleep, stopChild } from './processes';

/** True when a Redis on this loopback port answers PING. */
export function pong(port: number): Promise<boolean> {
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
  dir: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * A redis-server of our own on a free loopback port, data in `dir` (append-only file on, as in
 * the compose file), so benchmarks and fault tests never touch the shared Redis on 6379.
 */
export async function startPrivateRedis(dir: string, port?: number): Promise<PrivateRedis> {
  mkdirSync(dir, { recursive: true });
  const chosen = port ?? (await freePort());
  const child = spawn(
    'redis-server',
    ['--port', String(chosen), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--save', '', '--protected-mode', 'yes'],
    { stdio: 'ignore' },
  );
  const deadline = Date.now() + 10_000;
  while (!(await pong(chosen))) {
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode})`);
    if (Date.now() > deadline) {
      await stopChild(child);
      throw new Error('redis-server did not start');
    }
    await sleep(50);
  }
  return { url: `redis://127.0.0.1:${chosen}`, port: chosen, dir, child, stop: () => stopChild(child) };
}
