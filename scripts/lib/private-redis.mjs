// A redis-server of our own on a free loopback port, for benchmarks and fault tests: they may
// stop and restart it at will without touching anyone else's Redis (never the shared 6379).
// Persistence as in the compose file: append-only file in `dir`.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { freePort } from './embedded-postgres.mjs';

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/** True when a Redis on this loopback port answers PING. */
export function redisPong(port) {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    const finish = (ok) => {
      socket.destroy();
      done(ok);
    };
    socket.setTimeout(1000, () => finish(false));
    socket.on('error', () => finish(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => finish(data.toString().startsWith('+PONG')));
  });
}

function stopChild(child, graceMs = 10_000) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(kill);
      done();
    });
    // SIGTERM: Redis flushes the append-only file and exits cleanly.
    child.kill('SIGTERM');
  });
}

/**
 * @param {{ dir: string, port?: number }} options
 * @returns {Promise<{ url: string, port: number, pid: number, stop(): Promise<void> }>}
 */
export async function startPrivateRedis({ dir, port }) {
  mkdirSync(dir, { recursive: true });
  const chosen = port ?? (await freePort());
  const child = spawn(
    'redis-server',
    ['--port', String(chosen), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes',
      '--appendfsync', 'everysec', '--save', '', '--protected-mode', 'yes'],
    { stdio: 'ignore' },
  );
  const deadline = Date.now() + 15_000;
  while (!(await redisPong(chosen))) {
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode})`);
    if (Date.now() > deadline) {
      await stopChild(child);
      throw new Error('redis-server did not start within 15 s');
    }
    await sleep(50);
  }
  return { url: `redis://127.0.0.1:${chosen}`, port: chosen, pid: child.pid, stop: () => stopChild(child) };
}
