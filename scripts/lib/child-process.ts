// Small process helpers shared by the benchmarks, the fault tests and their private services.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Whether a server could listen on `port` of the loopback interface right now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((done) => {
    const probe = createServer();
    probe.once('error', () => done(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => done(true)));
  });
}

/** Lowest port the kernel hands to outgoing connections (and to listen(0)). */
function ephemeralFloor(): number {
  try {
    const low = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
    );
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** Where ports for servers started later are looked for: below the ephemeral range. */
const PORTS_FROM = 10_000;
/** Ports this process handed out: not free-looking twice before their server has bound them. */
const handedOut = new Set<number>();

/**
 * `count` consecutive free loopback ports for a server started next, often by another process.
 * They lie below the kernel's ephemeral range: a port that listen(0) found free is one the
 * kernel may give to any outgoing connection (a parallel test suite opens thousands) before
 * the server binds it, which then fails with EADDRINUSE (a Redis of a Sentinel set exited 1 so).
 */
export async function freePortBlock(count: number): Promise<number> {
  const span = ephemeralFloor() - PORTS_FROM - count;
  for (let tries = 0; span > 0 && tries < 1000; tries++) {
    const base = PORTS_FROM + Math.floor(Math.random() * span);
    let all = true;
    for (let i = 0; i < count && all; i++)
      all = !handedOut.has(base + i) && (await canListen(base + i));
    if (all) {
      for (let i = 0; i < count; i++) handedOut.add(base + i);
      return base;
    }
  }
  throw new Error(`no ${count} free loopback ports between ${PORTS_FROM} and the ephemeral range`);
}

/** A free loopback port for a server started next (see `freePortBlock`). */
export function freePort(): Promise<number> {
  return freePortBlock(1);
}

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/**
 * Ends a child we started: SIGTERM (services flush and exit cleanly; Redis writes its
 * append-only file), then SIGKILL after a grace period.
 */
export function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(kill);
      done();
    });
    child.kill('SIGTERM');
  });
}

/** A field of /proc/<pid>/status in bytes: VmRSS (resident now) or VmHWM (its peak so far). */
export function processMemory(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(
    readFileSync(`/proc/${pid}/status`, 'utf8'),
  );
  return match ? Number(match[1]) * 1024 : NaN;
}
