#!/usr/bin/env node
// Runs an embedded PostgreSQL as its own process (usage: <dataDir> <port>), printing one JSON
// line `{"url": …}` when it accepts connections and stopping on SIGTERM. `npm start` runs it
// in a process group of its own, so a Ctrl-C in the terminal does not kill the database
// before the services using it have shut down; it also stops if its parent disappears.
import { startEmbeddedPostgres } from './embedded-postgres.mjs';

const [dataDir, port] = process.argv.slice(2);
const server = await startEmbeddedPostgres({ dataDir, port: Number(port) });
process.stdout.write(JSON.stringify({ url: server.url }) + '\n');

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await server.stop();
  process.exit(0);
}
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) void stop();
}, 1000).unref();
