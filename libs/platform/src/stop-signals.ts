const SIGNAL_NUMBERS = { SIGTERM: 15, SIGINT: 2 } as const;
type StopSignal = keyof typeof SIGNAL_NUMBERS;

export interface StopSignalOptions {
  /** The one line written to stderr when a signal stops the process. */
  message: (signal: StopSignal) => string;
  /** The exit code; by default 128 + the signal's number (143 for SIGTERM), as a shell reports a kill. */
  exitCode?: number;
}

/**
 * Makes SIGTERM and SIGINT end the process, also as PID 1 of a container: the kernel drops a
 * signal sent to PID 1 that has no handler, and Node installs none, so without this `docker stop`
 * and Kubernetes wait out the grace period and kill. Once another handler is installed for the
 * signal (Nest's shutdown hooks, which close the app gracefully), that one does the stopping; a
 * second signal during that shutdown ends the process at once (128 + the signal's number), as it
 * would end a Node process that is not PID 1.
 */
export function exitOnStopSignals({ message, exitCode }: StopSignalOptions): void {
  let handedOver = false;
  for (const signal of Object.keys(SIGNAL_NUMBERS) as StopSignal[]) {
    process.on(signal, () => {
      if (process.listenerCount(signal) > 1) {
        handedOver = true;
        return;
      }
      const code = 128 + SIGNAL_NUMBERS[signal];
      process.stderr.write(`${handedOver ? `${signal} again: stopping now` : message(signal)}\n`);
      process.exit(handedOver ? code : (exitCode ?? code));
    });
  }
}
