import { runTogether } from './run-together';

/** A task that settles when told to. */
function task() {
  let settle!: (error?: Error) => void;
  const done = new Promise<void>((resolve, reject) => {
    settle = (error) => (error ? reject(error) : resolve());
  });
  return { start: () => done, settle };
}

describe('runTogether', () => {
  it('resolves once every task has', async () => {
    const [a, b] = [task(), task()];
    const stop = jest.fn();
    const run = runTogether([a.start, b.start], stop);
    a.settle();
    b.settle();
    await expect(run).resolves.toBeUndefined();
    expect(stop).not.toHaveBeenCalled();
  });

  it('stops the others at the first failure and rejects with it once all have settled', async () => {
    const [a, b, c] = [task(), task(), task()];
    const stop = jest.fn();
    let outcome: unknown = 'pending';
    const run = runTogether([a.start, b.start, c.start], stop).then(
      () => (outcome = 'resolved'),
      (error: unknown) => (outcome = error),
    );
    b.settle(new Error('first'));
    await new Promise(setImmediate);
    expect(stop).toHaveBeenCalledTimes(1);
    a.settle(new Error('second'));
    await new Promise(setImmediate);
    // c still runs: nothing is left behind.
    expect(outcome).toBe('pending');
    c.settle();
    await run;
    expect(outcome).toEqual(new Error('first'));
    expect(stop).toHaveBeenCalledTimes(1);
  });

  it('starts tasks as an async generator yields them; a generator that throws fails the run after what it started', async () => {
    const started = task();
    let stopped = false;
    async function* tasks() {
      yield started.start;
      await Promise.resolve();
      throw new Error('feed broke');
    }
    let outcome: unknown = 'pending';
    const run = runTogether(tasks(), () => (stopped = true)).catch(
      (error: unknown) => (outcome = error),
    );
    await new Promise(setImmediate);
    expect(stopped).toBe(true);
    expect(outcome).toBe('pending');
    started.settle();
    await run;
    expect(outcome).toEqual(new Error('feed broke'));
  });
});
