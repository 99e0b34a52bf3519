import { logSafeError } from '@app/errors';
import { exitOnStopSignals, userDirectory } from '@app/platform';
import { withNpmStartDatabase } from './npm-start-database';
import { runCli } from './run-cli';

exitOnStopSignals({ message: (signal) => `catalog: stopped by ${signal} before it finished` });

/** `npm run catalog -- <command>`; in the image: `node dist/apps/catalog-api/apps/catalog-api/src/cli/catalog.cli.js`. */
// `npm run` runs in the repository's root, where a running `npm start` leaves its state file.
const env = withNpmStartDatabase(process.env, process.cwd(), (text) =>
  process.stderr.write(`${text}\n`),
);
runCli(process.argv.slice(2), env, {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  // Files named on the command line are relative to where the user typed it.
  cwd: userDirectory('catalog'),
})
  // Exit explicitly: a scheduler or pool left open must not keep a finished command running.
  .then((code) => process.exit(code))
  .catch((error: unknown) => {
    console.error('unexpected failure:', logSafeError(error));
    process.exit(1);
  });
