import { Agent, createServer, get, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { until } from '../../../test/support/wait';
import { trackForDrain } from './graceful-shutdown';

/**
 * Real sockets on loopback: what a client on a keep-alive connection sees while the server
 * drains (the rolling update of `npm run test:deploy` shows it end to end behind a balancer).
 */
describe('trackForDrain', () => {
  let server: Server;
  let drain: () => Promise<void>;
  let port: number;
  const slow: (() => void)[] = [];
  const agents: Agent[] = [];

  beforeEach(async () => {
    server = createServer((req, res) => {
      if (req.url === '/slow') slow.push(() => res.end('slow done'));
      else res.end('fast');
    });
    drain = trackForDrain(server);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
  });

  afterEach(() => {
    for (const finish of slow.splice(0)) finish();
    for (const agent of agents.splice(0)) agent.destroy();
    server.closeAllConnections();
    server.close();
  });

  function keepAlive(): Agent {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    return agent;
  }

  function fetchWith(
    agent: Agent,
    path: string,
  ): Promise<{ status?: number; connection?: string; body: string; socket: Socket }> {
    return new Promise((done, fail) => {
      get({ host: '127.0.0.1', port, path, agent }, (res: IncomingMessage) => {
        // Taken now: the agent detaches it from the response at the end.
        const socket = res.socket;
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          done({
            status: res.statusCode,
            connection: res.headers.connection,
            body,
            socket,
          }),
        );
      }).on('error', fail);
    });
  }

  const closed = (socket: Socket) =>
    socket.destroyed ? Promise.resolve() : new Promise((done) => socket.once('close', done));

  it('answers the request in flight, with Connection: close, and resolves once it is answered', async () => {
    const agent = keepAlive();
    const first = await fetchWith(agent, '/fast');
    expect(first.connection).toBe('keep-alive');
    const inFlight = fetchWith(agent, '/slow');
    await until(() => slow.length === 1, 'the slow request to arrive');
    const order: string[] = [];
    const draining = drain().then(() => order.push('drained'));
    await until(() => !server.listening, 'the listener to close');
    order.push('answering');
    slow[0]();
    const answer = await inFlight;
    expect(answer).toMatchObject({ status: 200, body: 'slow done', connection: 'close' });
    await draining;
    expect(order).toEqual(['answering', 'drained']);
    await closed(answer.socket);
  });

  it('closes idle keep-alive connections at once', async () => {
    const agent = keepAlive();
    const { socket } = await fetchWith(agent, '/fast');
    expect(socket.destroyed).toBe(false);
    await drain();
    await closed(socket);
  });

  it('takes no new connection once draining', async () => {
    const agent = keepAlive();
    const inFlight = fetchWith(agent, '/slow');
    await until(() => slow.length === 1, 'the slow request to arrive');
    const draining = drain();
    await expect(fetchWith(new Agent(), '/fast')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    slow[0]();
    await inFlight;
    await draining;
  });

  it('resolves at once when the server never listened', async () => {
    const idle = createServer();
    await expect(trackForDrain(idle)()).resolves.toBeUndefined();
  });
});
