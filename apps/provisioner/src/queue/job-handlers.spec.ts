import { assertEveryJobHasHandler } from './job-handlers';

describe('assertEveryJobHasHandler', () => {
  const handle = (): Promise<null> => Promise.resolve(null);

  it('passes when every job name has a handler', () => {
    expect(() => assertEveryJobHasHandler('q', ['a', 'b'], { a: handle, b: handle })).not.toThrow();
  });

  it('names every job without a handler and the queue', () => {
    expect(() =>
      assertEveryJobHasHandler('q', ['a', 'b', 'c'], { b: handle, c: 'not a function' }),
    ).toThrow('queue "q": no handler for job "a", "c" in its processor');
  });
});
