import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { answeredWithin } from './answered-within';

describe('answeredWithin', () => {
  it('counts an answer that arrived while the event loop was busy past the deadline', async () => {
    // A dependency's answer on a loopback socket, written before this process blocks: it sits
    // in the socket's buffer when the deadline passes, as a database's reply does on a replica
    // busy rendering pages.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
    const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    const peer = await accepted;
    await new Promise<void>((resolve) =>
      client.readyState === 'open' ? resolve() : client.once('connect', () => resolve()),
    );
    try {
      const reply = new Promise<void>((resolve) => client.once('data', () => resolve()));
      const answered = answeredWithin(reply, 20);
      peer.write('pong');
      const busyUntil = Date.now() + 100;
      while (Date.now() < busyUntil); // the event loop held past the deadline
      await expect(answered).resolves.toBeUndefined();
    } finally {
      client.destroy();
      peer.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('still reports a dependency that does not answer by the deadline', async () => {
    await expect(answeredWithin(new Promise<void>(() => undefined), 20)).rejects.toThrow(
      'no answer within 20 ms',
    );
  });
});
