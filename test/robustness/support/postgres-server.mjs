// Runs an embedded PostgreSQL (scripts/lib/embedded-postgres.mjs) as its own process, so a jest
// test (which cannot import ES modules) can start and stop a Postgres of its own.
// Usage: node postgres-server.mjs <dataDir> [port]; prints {"url","port"} once it accepts
// connections; SIGTERM stops Postgres cleanly, then exits.
import { startEmbeddedPostgres } from '../../../scripts/lib/embedded-postgres.mjs';

const [dataDir, port] = process.argv.slice(2);
const pg = await startEmbeddedPostgres({ dataDir, port: port ? Number(port) : undefined, persistent: true });
process.stdout.write(`${JSON.stringify({ url: pg.url, port: pg.port })}\n`);
let stopping = false;
process.on('SIGTERM', () => {
  if (stopping) return;
  stopping = true;
  pg.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
