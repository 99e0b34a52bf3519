/**
 * Runs tasks side by side as one piece of work that must not outlive its caller (copies into a
 * staging area the caller removes when they fail): the first failure calls `stop` once, which
 * the tasks heed by starting nothing new, and is the error this rejects with, only after every
 * task started has settled. Each task starts as `tasks` yields it, so an async generator can
 * start them as their work arrives; an error the generator throws counts as a failure too.
 */
export async function runTogether(
  tasks: Iterable<() => Promise<void>> | AsyncIterable<() => Promise<void>>,
  stop: () => void,
): Promise<void> {
  let first: { error: unknown } | undefined;
  const fail = (error: unknown): void => {
    if (first) return;
    first = { error };
    stop();
  };
  const running: Promise<void>[] = [];
  try {
    for await (const start of tasks) running.push(start().catch(fail));
  } catch (error) {
    fail(error);
  }
  await Promise.all(running);
  if (first) throw first.error;
}
