import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const OPTIONS_MODULE = join(__dirname, '..', 'scripts', 'lib', 'start-options.mjs');

interface StartOptions {
  embedded: boolean;
  demoData: boolean;
  host: string;
}

/** What `npm start` decides for this environment and these arguments (the module is ESM, run by node). */
function startOptions(env: Record<string, string>, argv: string[] = []): StartOptions {
  const script = `import(${JSON.stringify(OPTIONS_MODULE)}).then((m) => process.stdout.write(JSON.stringify(m.startOptions(JSON.parse(process.env.ENV_UNDER_TEST), JSON.parse(process.env.ARGV_UNDER_TEST)))))`;
  const out = execFileSync(process.execPath, ['-e', script], {
    env: {
      ...process.env,
      ENV_UNDER_TEST: JSON.stringify(env),
      ARGV_UNDER_TEST: JSON.stringify(argv),
    },
    encoding: 'utf8',
  });
  return JSON.parse(out) as StartOptions;
}

describe('npm start (scripts/start.mjs) defaults', () => {
  it('listens on 127.0.0.1 unless HOST says otherwise', () => {
    expect(startOptions({}).host).toBe('127.0.0.1');
    expect(startOptions({ DATABASE_URL: 'postgres://db/catalog' }).host).toBe('127.0.0.1');
    expect(startOptions({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
  });

  it('loads demo data into the embedded database only', () => {
    expect(startOptions({})).toMatchObject({ embedded: true, demoData: true });
    expect(startOptions({ DATABASE_URL: 'postgres://db/catalog' })).toMatchObject({
      embedded: false,
      demoData: false,
    });
  });

  it('loads demo data into a configured database when asked with --demo-data', () => {
    expect(startOptions({ DATABASE_URL: 'postgres://db/catalog' }, ['--demo-data'])).toMatchObject({
      embedded: false,
      demoData: true,
    });
  });

  it('refuses an argument it does not know instead of ignoring it', () => {
    expect(() => startOptions({}, ['--demo'])).toThrow(/unknown argument --demo/);
  });
});
