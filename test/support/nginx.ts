import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort } from './app-process';
import { until } from './wait';

const TEMPLATE = join(__dirname, '../../deploy/nginx/drs-offload.conf.template');

export interface OffloadNginx {
  url: string;
  /** What nginx wrote to its stdout so far: the template's access lines. */
  accessLog(): string;
  /** Everything else nginx wrote: its error log file and its stderr. */
  errorLog(): string;
  stop(): Promise<void>;
}

/** The offload template with its placeholders filled in (all four must be given). */
export function renderOffloadConfig(values: {
  LISTEN: string;
  UPSTREAM: string;
  STORAGE_ROOT: string;
  PREFIX: string;
}): string {
  return readFileSync(TEMPLATE, 'utf8').replace(/\$\{([A-Z_]+)\}/g, (whole, name: string) => {
    const value = (values as Record<string, string>)[name];
    if (value === undefined) throw new Error(`drs-offload template: no value for ${whole}`);
    return value;
  });
}

/**
 * The rendered template with its one `internal;` taken out: clients may then ask for the storage
 * location directly, served by the very directives that serve an offloaded read (the bench's
 * nginx-alone ceiling; never deployed).
 */
export function withInternalOpened(server: string): string {
  const lines = server.split('\n');
  const internal = lines.filter((line) => line.trim() === 'internal;');
  if (internal.length !== 1)
    throw new Error(`drs-offload template: ${internal.length} internal lines`);
  return lines.filter((line) => line.trim() !== 'internal;').join('\n');
}

/**
 * Debian's nginx in the foreground, as an unprivileged user would run it: pid, logs and temp
 * paths in `dir`, the offload server from the deployed template in front of `upstream`
 * (`openInternal`: with its storage location open to clients, see withInternalOpened).
 */
export async function startOffloadNginx(
  dir: string,
  upstream: string,
  storageRoot: string,
  port?: number,
  prefix = '/_drs_internal/',
  options: { openInternal?: boolean } = {},
): Promise<OffloadNginx> {
  mkdirSync(join(dir, 'temp'), { recursive: true });
  port ??= await freePort();
  let server = renderOffloadConfig({
    LISTEN: `127.0.0.1:${port}`,
    UPSTREAM: upstream,
    STORAGE_ROOT: storageRoot,
    PREFIX: prefix,
  });
  if (options.openInternal) server = withInternalOpened(server);
  const conf = join(dir, 'nginx.conf');
  const temp = (name: string) => `${name}_temp_path ${join(dir, 'temp', name)};`;
  writeFileSync(
    conf,
    [
      'daemon off;',
      // Started by root (a CI container), nginx's workers would become `nobody`, who cannot
      // read the test's private temp directories; as any other user nginx stays that user.
      process.getuid?.() === 0 ? 'user root;' : '',
      'worker_processes 1;',
      `pid ${join(dir, 'nginx.pid')};`,
      // Everything from `info` up: what a verbose operator would keep.
      `error_log ${join(dir, 'error.log')} info;`,
      'events { worker_connections 256; }',
      'http {',
      `  access_log ${join(dir, 'access.log')};`,
      `  ${temp('client_body')} ${temp('proxy')} ${temp('fastcgi')} ${temp('uwsgi')} ${temp('scgi')}`,
      server,
      '}',
      '',
    ].join('\n'),
  );
  const stdoutPath = join(dir, 'stdout.log');
  const stdoutFd = openSync(stdoutPath, 'a');
  const child: ChildProcess = spawn('/usr/sbin/nginx', ['-p', dir, '-c', conf], {
    // stdout is a file, as a container's is to its engine: the template logs to /dev/stdout,
    // which nginx opens anew (a pipe from this process is a socket, which cannot be opened).
    stdio: ['ignore', stdoutFd, 'pipe'],
  });
  closeSync(stdoutFd);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await until(
    async () => {
      if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}`);
      return accepts(port!);
    },
    `nginx listening on ${port}`,
    10_000,
    20,
  );
  return {
    url: `http://127.0.0.1:${port}`,
    accessLog: () => readFileSync(stdoutPath, 'utf8'),
    errorLog: () => `${readFileSync(join(dir, 'error.log'), 'utf8')}${stderr}`,
    async stop() {
      if (child.exitCode === null) child.kill('SIGQUIT');
      await exited;
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
