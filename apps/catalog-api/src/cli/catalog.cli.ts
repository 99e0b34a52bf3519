import { logSafeError } from '@app/errors';
import { exitOnStopSignals } from '@app/platform';
import { runCli } from './run-cli';

exitOnStopSignals({ message: (signal) => `catalog: stopped by ${signal} before it finished` });

/** `npm run catalog -- <command>`; in the image: `node dist/apps/catalog-api/apps/catalog-api/src/cli/catalog.cli.js`. */
runCli(process.argv.slice(2), process.env, {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  cwd: process.cwd(),
})
  // Exit explicitly: a scheduler or pool left open must not keep a finished command running.
  .then((code) => process.exit(code))
  .catch((error: unknown) => {
    console.error('unexpected failure:', logSafeError(error));
    process.exit(1);
  });
