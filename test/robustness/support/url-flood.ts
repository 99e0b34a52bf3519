import { connect, Socket } from 'node:net';

export interface FloodResult {
  answered: number;
  byStatus: Record<number, number>;
  seconds: number;
}

/**
 * Sends `total` GET requests, `pathOf(0)` … `pathOf(total - 1)`, over `connections` kept-alive
 * sockets with up to `depth` pipelined requests each, and counts the answers by status. A bare
 * client on purpose: a flood of hundreds of thousands of requests must measure the server, and
 * a full HTTP client spends about as long per answer as the server does. It reads what the
 * services answer (every response framed by Content-Length) and fails on anything else.
 */
export function floodUrls(
  port: number,
  pathOf: (n: number) => string,
  total: number,
  connections = 8,
  depth = 16,
): Promise<FloodResult> {
  const started = performance.now();
  const result: FloodResult = { answered: 0, byStatus: {}, seconds: 0 };
  let next = 0;
  const request = (n: number) => `GET ${pathOf(n)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;

  const drive = (socket: Socket) =>
    new Promise<void>((done, fail) => {
      let inFlight = 0;
      let pending: Buffer = Buffer.alloc(0);
      const send = () => {
        let batch = '';
        while (inFlight < depth && next < total) {
          batch += request(next++);
          inFlight++;
        }
        if (batch !== '') socket.write(batch);
        if (inFlight === 0) {
          socket.end();
          done();
        }
      };
      socket.on('data', (chunk: Buffer) => {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
        for (;;) {
          const end = pending.indexOf('\r\n\r\n');
          if (end === -1) break;
          const head = pending.toString('latin1', 0, end);
          if (/\r\ntransfer-encoding:/i.test(head)) return fail(new Error('chunked answer'));
          const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
          if (pending.length < end + 4 + length) break;
          const status = Number(head.slice(9, 12));
          result.byStatus[status] = (result.byStatus[status] ?? 0) + 1;
          result.answered++;
          inFlight--;
          pending = pending.subarray(end + 4 + length);
        }
        send();
      });
      socket.on('error', fail);
      socket.on('close', () =>
        inFlight > 0 ? fail(new Error('connection closed early')) : done(),
      );
      socket.on('connect', send);
    });

  const sockets = Array.from({ length: connections }, () => connect({ host: '127.0.0.1', port }));
  return Promise.all(sockets.map(drive)).then(
    () => ({ ...result, seconds: (performance.now() - started) / 1000 }),
    (error: unknown) => {
      for (const socket of sockets) socket.destroy();
      throw error;
    },
  );
}
