import { userDirectory } from './cli-help';

describe('userDirectory', () => {
  it('is npm’s INIT_CWD when this process is the npm script named', () => {
    const env = { npm_lifecycle_event: 'catalog', INIT_CWD: '/home/steward/exports' };
    expect(userDirectory('catalog', env, '/srv/checkout')).toBe('/home/steward/exports');
  });

  it('is the working directory when INIT_CWD was inherited from another npm script', () => {
    // `npm test` spawning the command: its INIT_CWD is where the tests were started.
    const env = { npm_lifecycle_event: 'test', INIT_CWD: '/srv/checkout' };
    expect(userDirectory('catalog', env, '/tmp/run-1')).toBe('/tmp/run-1');
  });

  it('is the working directory outside npm (the image runs the built file)', () => {
    expect(userDirectory('catalog', {}, '/data')).toBe('/data');
    expect(userDirectory('catalog', { npm_lifecycle_event: 'catalog' }, '/data')).toBe('/data');
  });
});
