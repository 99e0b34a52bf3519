import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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

describe('every processor of the provisioner', () => {
  // A processor added without the check would fail its jobs one by one instead of the boot.
  const root = join(__dirname, '..');
  const processors = readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.processor.ts'))
    .map((file) => ({ file, text: readFileSync(join(root, file), 'utf8') }));

  it('finds the processors', () => {
    expect(processors.map(({ file }) => file.split(/[\\/]/).pop()).sort()).toEqual([
      'import.processor.ts',
      'storage-registration.processor.ts',
      'trail.processor.ts',
    ]);
  });

  it.each(processors.map(({ file, text }) => [file, text]))(
    '%s checks its job handlers in onModuleInit',
    (_file, text) => {
      const init = text.indexOf('onModuleInit(');
      expect(init).toBeGreaterThan(-1);
      expect(text.indexOf('assertEveryJobHasHandler(', init)).toBeGreaterThan(init);
    },
  );
});
