import { logSafeError } from '@app/errors';
import { SettingsError } from './settings';

/**
 * Runs a process entry point: bad settings print their full list and exit 1; any other
 * start-up failure is printed and exits 1 too, so an orchestrator sees a crash, not a hang.
 */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    if (error instanceof SettingsError) {
      console.error(error.message);
    } else {
      console.error('start-up failed:', logSafeError(error));
    }
    process.exit(1);
  });
}
