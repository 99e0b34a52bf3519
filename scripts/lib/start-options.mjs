// What `npm start` makes of its environment and arguments, apart from the doing, so that a test
// can check the defaults (test/npm-start.spec.ts).

const FLAGS = new Set(['--demo-data', '--help', '-h']);

export const USAGE = `Usage: npm start [-- --demo-data]

Builds when needed and runs the catalog API, the provisioner API and its worker on this machine.
Without DATABASE_URL an embedded PostgreSQL under .data/ is started and the demo data loaded into
it; --demo-data loads the demo data into the configured database too. See README.md.`;

/**
 * `embedded`: no DATABASE_URL, so an embedded PostgreSQL is started under .data/.
 * `demoData`: the demo catalog, its keys and the demo drop zone are loaded only into that
 * embedded database, or anywhere when asked with --demo-data (never by accident into a real one).
 * `host`: the services listen on the loopback interface unless HOST says otherwise.
 */
export function startOptions(env, argv) {
  const unknown = argv.filter((arg) => !FLAGS.has(arg));
  if (unknown.length > 0) {
    throw new Error(`unknown argument ${unknown.join(' ')} (usage: npm start [-- --demo-data])`);
  }
  if (argv.includes('--help') || argv.includes('-h')) return { help: true };
  const embedded = !env.DATABASE_URL;
  return {
    embedded,
    demoData: embedded || argv.includes('--demo-data'),
    host: env.HOST || '127.0.0.1',
  };
}
