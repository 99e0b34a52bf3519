import { spawn } from 'node:child_process';
import type { ValidatorConfig } from '../../config/validator-config';

/** What a validator's run came to, before its result.json is read. */
export type ValidatorExit =
  | { kind: 'exited'; code: number | null; signal: NodeJS.Signals | null; output: string }
  | { kind: 'timed_out'; output: string }
  /** The worker is stopping (its signal aborted): the validator was killed. */
  | { kind: 'stopped' }
  | { kind: 'not_started'; message: string };

/** Where one run's directories are: what the command's placeholders stand for. */
export interface ValidatorDirectories {
  /** Stands for /mnt/input: input.json, and `data` (subprocess runs). */
  input: string;
  /** Stands for /mnt/output: the validator writes result.json here. */
  output: string;
  /** The staged files (a container run mounts it on /mnt/input/data, read-only). */
  data: string;
  /** The validator's TMPDIR and working directory, removed with the rest. */
  scratch: string;
}

/** The last this many bytes of what the validator printed are kept for a refusal's reason. */
export const OUTPUT_TAIL_BYTES = 2048;

/** After the validator exited, how long its output pipes may stay open. */
const CLOSE_GRACE_MS = 1000;

/**
 * The command with its placeholders replaced. A subprocess run is wrapped: `setpriv
 * --pdeathsig KILL` (the validator dies with a killed worker) and `prlimit` (address space,
 * no core file, no file past `maxFileBytes`); a container run gets the first only, its engine
 * applies the limits the command passes it (`{memory_mb}`).
 */
export function validatorArgv(
  validator: ValidatorConfig,
  dirs: ValidatorDirectories,
  maxFileBytes: number,
): string[] {
  const values: Record<string, string> = {
    input: dirs.input,
    output: dirs.output,
    data: dirs.data,
    timeout_s: String(Math.ceil(validator.timeout_ms / 1000)),
    memory_mb: String(validator.memory_mb),
  };
  const command = validator.command.map((part) =>
    part.replace(/\{(input|output|data|timeout_s|memory_mb)\}/g, (_, key: string) => values[key]),
  );
  const limits = validator.container
    ? []
    : [
        'prlimit',
        `--as=${validator.memory_mb * 1024 * 1024}`,
        '--core=0',
        `--fsize=${maxFileBytes}`,
        '--',
      ];
  return ['setpriv', '--pdeathsig', 'KILL', '--', ...limits, ...command];
}

/**
 * Runs a validator in a process group of its own, with nothing of the worker's environment but
 * PATH (the worker's holds secrets), and waits for it to exit: at its time limit, or when
 * `signal` aborts, the whole group is killed. Whatever the group left running is killed once
 * the validator has exited.
 */
export function runValidatorProcess(
  validator: ValidatorConfig,
  dirs: ValidatorDirectories,
  maxFileBytes: number,
  signal?: AbortSignal,
): Promise<ValidatorExit> {
  if (signal?.aborted) return Promise.resolve({ kind: 'stopped' });
  const [program, ...args] = validatorArgv(validator, dirs, maxFileBytes);
  return new Promise((resolve) => {
    const child = spawn(program, args, {
      cwd: dirs.scratch,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', TMPDIR: dirs.scratch },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let tail = Buffer.alloc(0);
    const keep = (chunk: Buffer): void => {
      tail = Buffer.concat([tail, chunk]);
      if (tail.length > OUTPUT_TAIL_BYTES) tail = tail.subarray(tail.length - OUTPUT_TAIL_BYTES);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let ended: 'timed_out' | 'stopped' | null = null;
    const killGroup = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is gone already.
      }
    };
    const end = (why: 'timed_out' | 'stopped'): void => {
      ended ??= why;
      killGroup();
    };
    const timer = setTimeout(() => end('timed_out'), validator.timeout_ms);
    const onAbort = (): void => end('stopped');
    signal?.addEventListener('abort', onAbort, { once: true });
    let done = false;
    const finish = (exit: ValidatorExit): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(exit);
    };
    const exited = (code: number | null, exitSignal: NodeJS.Signals | null): void => {
      const output = tail.toString('utf8').replace(/^\uFFFD+/, '');
      if (ended === 'stopped') finish({ kind: 'stopped' });
      else if (ended === 'timed_out') finish({ kind: 'timed_out', output });
      else finish({ kind: 'exited', code, signal: exitSignal, output });
    };
    child.once('error', (error) => finish({ kind: 'not_started', message: error.message }));
    child.once('exit', (code, exitSignal) => {
      killGroup();
      // Its last output is read once the pipes close; a process that left the group and holds
      // them open is not waited for.
      child.once('close', () => exited(code, exitSignal));
      setTimeout(() => exited(code, exitSignal), CLOSE_GRACE_MS).unref();
    });
  });
}
