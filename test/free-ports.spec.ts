import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { freePort, freePortBlock, freePortWithCompanion } from '../scripts/lib/child-process';

const ephemeralFloor = Number(
  readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
);

const listen = (port: number) =>
  new Promise<() => Promise<void>>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () =>
      resolve(() => new Promise<void>((done) => server.close(() => done()))),
    );
  });

/**
 * Ports for servers another process starts next (Redis, nginx, an app): never one the kernel
 * may hand to an outgoing connection meanwhile, never the same one twice.
 */
describe('free ports for servers started later', () => {
  it('lie below the ephemeral range, differ from each other, and can be bound', async () => {
    const ports = await Promise.all(Array.from({ length: 50 }, () => freePort()));
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) expect(port).toBeLessThan(ephemeralFloor);
    const closers = await Promise.all(ports.map(listen));
    await Promise.all(closers.map((close) => close()));
  });

  it('gives a block of consecutive ports, none handed out before', async () => {
    const single = await freePort();
    const base = await freePortBlock(5);
    expect(base + 4).toBeLessThan(ephemeralFloor);
    expect([0, 1, 2, 3, 4].map((i) => base + i)).not.toContain(single);
    const closers = await Promise.all([0, 1, 2, 3, 4].map((i) => listen(base + i)));
    await Promise.all(closers.map((close) => close()));
  });

  it('gives a port whose companion (a Redis Cluster bus port, + 10000) is free and below the range too', async () => {
    const port = await freePortWithCompanion(10_000);
    expect(port + 10_000).toBeLessThan(ephemeralFloor);
    const closers = await Promise.all([listen(port), listen(port + 10_000)]);
    await Promise.all(closers.map((close) => close()));
  });
});
