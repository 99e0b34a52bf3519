import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

export interface PostgresProcess {
  url: string;
  port: number;
  /** Stops Postgres cleanly (it finishes its shutdown before this resolves). */
  stop(): Promise<void>;
}

/** An embedded Postgres of the test's own, in `dataDir` (kept across restarts). */
export async function startPostgresProcess(dataDir: string, port?: number): Promise<PostgresProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    [join(__dirname, 'postgres-server.mjs'), dataDir, ...(port ? [String(port)] : [])],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const started = await new Promise<{ url: string; port: number }>((done, fail) => {
    const timer = setTimeout(() => fail(new Error('embedded Postgres did not start within 60 s')), 60_000);
    child.stdout?.once('data', (chunk: Buffer) => {
      clearTimeout(timer);
      done(JSON.parse(chunk.toString()) as { url: string; port: number });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`embedded Postgres exited (${code})`));
    });
  });
  return {
    ...started,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}
