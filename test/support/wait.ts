/**
 * Polls `probe` every `intervalMs` until it returns a value (anything but undefined), and
 * returns it; throws naming `what` after `timeoutMs`, so a wait that never ends fails with the
 * thing it waited for instead of the test's time-out. `probe` may throw to stop early.
 */
export async function poll<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  what: string,
  timeoutMs = 10_000,
  intervalMs = 10,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Polls `condition` every `intervalMs` until it holds; throws naming `what` after `timeoutMs`. */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
  intervalMs = 10,
): Promise<void> {
  await poll(async () => ((await condition()) ? true : undefined), what, timeoutMs, intervalMs);
}
