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
 * A free loopback port `base` such that `base + offset` is free for every offset given, for a
 * server started next, often by another process. They lie below the kernel's ephemeral range: a
 * port that listen(0) found free is one the kernel may give to any outgoing connection (a
 * parallel test suite opens thousands) before the server binds it, which then fails with
 * EADDRINUSE (a Redis of a Sentinel set exited 1 so).
 */
async function freePorts(offsets: number[]): Promise<number> {
  const span = ephemeralFloor() - PORTS_FROM - Math.max(...offsets);
  for (let tries = 0; span > 0 && tries < 1000; tries++) {
    const base = PORTS_FROM + Math.floor(Math.random() * span);
    let all = true;
    for (const offset of offsets)
      all &&= !handedOut.has(base + offset) && (await canListen(base + offset));
    if (all) {
      for (const offset of offsets) handedOut.add(base + offset);
      return base;
    }
  }
  throw new Error(`no free loopback ports between ${PORTS_FROM} and the ephemeral range`);
}

/** `count` consecutive free loopback ports for a server started next (see `freePorts`). */
export function freePortBlock(count: number): Promise<number> {
  return freePorts(Array.from({ length: count }, (_, i) => i));
}

/** A free loopback port for a server started next (see `freePorts`). */
export function freePort(): Promise<number> {
  return freePorts([0]);
}

/**
 * A free loopback port whose companion `port + offset` is free too, below the ephemeral range: a
 * Redis Cluster node also binds its bus port, its port + 10000.
 */
export function freePortWithCompanion(offset: number): Promise<number> {
  return freePorts([0, offset]);
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

/** utime + stime (fields 14, 15) or cutime + cstime (16, 17) of /proc/<pid>/stat, in ms. */
export function statCpuMs(stat: string, children: boolean): number {
  // Fields after the command name, from state (field 3), in clock ticks (100 a second on Linux).
  const fields = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  return (children ? fields[13] + fields[14] : fields[11] + fields[12]) * 10;
}

/**
 * CPU time in ms of a process, all its threads (`self`: the waited-for children of the bench,
 * i.e. the tools it ran in spawnSync).
 */
export function cpuMs(pid: number | 'self'): number {
  return statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'), pid === 'self');
}
