import { logSafeError } from '@app/errors';
import { SettingsError } from './settings';
import { exitOnStopSignals } from './stop-signals';

/**
 * A process that must not start in what it found (a database it cannot use, say): its message
 * is the one line printed, saying what is wrong and what to set instead.
 */
export class StartRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartRefused';
  }
}

/**
 * Runs a process entry point: bad settings print their full list and exit 1; a refusal prints
 * its one line and exits 1; any other start-up failure is printed and exits 1 too, so an
 * orchestrator sees a crash, not a hang. A stop signal before the app's own shutdown hooks are
 * installed (while it connects, say) ends it at once with 0: a stop that was asked for, with
 * nothing started to finish.
 */
export function runMain(main: () => Promise<void>): void {
  exitOnStopSignals({ message: (signal) => `stopped by ${signal} while starting`, exitCode: 0 });
  main().catch((error: unknown) => {
    if (error instanceof SettingsError || error instanceof StartRefused) {
      console.error(error.message);
    } else {
      console.error('start-up failed:', logSafeError(error));
    }
    process.exit(1);
  });
}
