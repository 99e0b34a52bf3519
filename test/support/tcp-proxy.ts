import { createServer, type Server, type Socket, connect } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A loopback TCP proxy in front of a real server that can stop answering the way a frozen
 * server does (its process stopped, SIGSTOP): connections are still accepted (the kernel's
 * backlog does that for a stopped process too), but no byte is forwarded either way until it is
 * thawed; bytes sent meanwhile sit in the socket buffers until they fill. `trickle` forwards the
 * server's answers one byte at a time, slowly: a server that never goes silent, never finishes.
 */
export interface TcpProxy {
  port: number;
  freeze(): void;
  trickle(intervalMs: number): void;
  thaw(): void;
  close(): Promise<void>;
}

type Mode = { kind: 'open' } | { kind: 'frozen' } | { kind: 'trickle'; intervalMs: number };

export async function startTcpProxy(
  targetPort: number,
  targetHost = '127.0.0.1',
): Promise<TcpProxy> {
  let mode: Mode = { kind: 'open' };
  const sockets = new Set<Socket>();
  /** Connections accepted while frozen: joined to the server once thawed. */
  const waiting: Socket[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };

  /** Bytes from `from` to `to`, held back while frozen, one at a time while trickling. */
  const forward = (from: Socket, to: Socket, answers: boolean) => {
    const queue: Buffer[] = [];
    let timer: NodeJS.Timeout | null = null;
    const drip = () => {
      timer = null;
      const chunk = queue[0];
      if (!chunk || to.destroyed) return;
      to.write(chunk.subarray(0, 1));
      if (chunk.length > 1) queue[0] = chunk.subarray(1);
      else queue.shift();
      if (queue.length > 0) schedule();
    };
    const schedule = () => {
      if (timer || mode.kind !== 'trickle') return;
      timer = setTimeout(drip, mode.intervalMs);
      timers.add(timer);
    };
    from.on('data', (chunk: Buffer) => {
      if (answers && mode.kind === 'trickle') {
        queue.push(chunk);
        schedule();
        return;
      }
      if (!to.write(chunk)) from.pause();
    });
    to.on('drain', () => {
      if (mode.kind !== 'frozen') from.resume();
    });
    from.on('end', () => to.end());
    from.on('close', () => to.destroy());
  };

  const join = (client: Socket) => {
    const server = connect(targetPort, targetHost);
    track(server);
    forward(client, server, false);
    forward(server, client, true);
  };

  const proxy: Server = createServer((client) => {
    track(client);
    if (mode.kind === 'frozen') {
      client.pause();
      waiting.push(client);
    } else join(client);
  });
  await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));

  return {
    port: (proxy.address() as AddressInfo).port,
    freeze() {
      mode = { kind: 'frozen' };
      for (const socket of sockets) socket.pause();
    },
    trickle(intervalMs) {
      mode = { kind: 'trickle', intervalMs };
    },
    thaw() {
      mode = { kind: 'open' };
      for (const socket of sockets) socket.resume();
      for (const client of waiting.splice(0)) {
        if (client.destroyed) continue;
        join(client);
        client.resume();
      }
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => proxy.close(() => done()));
    },
  };
}
