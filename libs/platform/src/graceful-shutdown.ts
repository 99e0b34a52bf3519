import type { Server, ServerResponse } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { logSafeError } from '@app/errors';
import { ShutdownState } from './health.module';

/**
 * Tracks the answers of `server` and returns the function that drains it: the listener stops
 * taking connections, every answer still to come says `Connection: close` and closes its
 * connection once written, idle keep-alive connections close at once, and the promise resolves
 * when the last connection has closed, i.e. when every request in flight has been answered.
 * An answer whose headers were written before the drain began keeps them; its connection closes
 * after it all the same.
 */
export function trackForDrain(server: Server): () => Promise<void> {
  const unanswered = new Set<ServerResponse>();
  let draining = false;
  const closeAfter = (res: ServerResponse) => {
    if (!res.headersSent) res.setHeader('connection', 'close');
  };
  // First, in front of every other handler (the catalog's fast reads answer before Express).
  server.prependListener('request', (_req, res: ServerResponse) => {
    if (draining) return closeAfter(res);
    unanswered.add(res);
    res.once('close', () => unanswered.delete(res));
  });
  return () => {
    draining = true;
    for (const res of unanswered) closeAfter(res);
    unanswered.clear();
    if (!server.listening) return Promise.resolve();
    // close(): stop accepting, close the idle connections; its callback runs once none is left.
    return new Promise((done) => server.close(() => done()));
  };
}

/**
 * Listens, and on SIGTERM (or SIGINT) shuts down without dropping a request: readiness turns
 * 503, the server drains (`trackForDrain`), then the app closes (its hooks, the database) and the
 * process exits 0. In Kubernetes the pod's preStop pause comes first, while endpoints and load
 * balancers stop sending to the pod; the grace period bounds the whole.
 */
export async function listenUntilSignalled(
  app: INestApplication,
  port: number,
  host: string,
): Promise<void> {
  const drain = trackForDrain(app.getHttpServer() as Server);
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      // Readiness 503 at once (the apps hold it in their HealthModule).
      app.get(ShutdownState, { strict: false }).beforeApplicationShutdown();
      await drain();
      await app.close();
    })().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('shutdown failed:', logSafeError(error));
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await app.listen(port, host);
}
