// Runs docker-compose.yml on podman, as one pod (docs/decisions/compose-on-podman-as-one-pod.md):
// every service shares the pod's network, finds the others by their service names (host entries
// pointing at the pod's loopback), and starts only when what it depends on is healthy (or, for
// a one-shot service, has exited 0): the compose file's `depends_on` conditions, its healthchecks,
// images, commands, env files, volumes, read-only roots, tmpfs, capabilities, restart policies and
// CPU/memory limits are all taken from the file. Used by `npm run deploy:local` and test/deploy.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CONTAINERS_CONF = join(ROOT, 'deploy/podman/containers.conf');

export function podmanEnv(extra = {}) {
  return {
    ...process.env,
    CONTAINERS_CONF: process.env.CONTAINERS_CONF ?? CONTAINERS_CONF,
    ...extra,
  };
}

/** podman, synchronously; throws with podman's own message unless `allowFail`. */
export function podman(args, { allowFail = false, input } = {}) {
  const out = spawnSync('podman', args, {
    env: podmanEnv(),
    encoding: 'utf8',
    input,
    maxBuffer: 64 << 20,
  });
  if (out.error) throw out.error;
  if (out.status !== 0 && !allowFail) {
    throw new Error(
      `podman ${args.slice(0, 3).join(' ')} … failed (${out.status}): ${out.stderr.trim().slice(-800)}`,
    );
  }
  return { status: out.status, stdout: out.stdout.trim(), stderr: out.stderr.trim() };
}

/** podman, asynchronously, streaming its output to ours (long builds). */
export function podmanLive(args, { quiet = false, env = {} } = {}) {
  return new Promise((done, fail) => {
    const child = spawn('podman', args, {
      env: podmanEnv(env),
      stdio: ['ignore', quiet ? 'ignore' : 'inherit', 'inherit'],
    });
    child.once('error', fail);
    child.once('exit', (code) =>
      code === 0 ? done() : fail(new Error(`podman ${args[0]} failed (${code})`)),
    );
  });
}

/** Whether podman can run a container here at all: null when it can, else the reason. */
export function podmanBlocker() {
  const which = spawnSync('sh', ['-c', 'command -v podman'], { encoding: 'utf8' });
  if (which.status !== 0) return 'podman is not installed (apt-get install podman runc catatonit)';
  // A pod's pause container runs podman's catatonit; Debian only recommends the package.
  const pause = spawnSync(
    'sh',
    ['-c', 'command -v catatonit || test -x /usr/libexec/podman/catatonit'],
    {
      encoding: 'utf8',
    },
  );
  if (pause.status !== 0)
    return 'podman cannot start pods: catatonit is missing (apt-get install catatonit)';
  const info = spawnSync('podman', ['info', '--format', '{{.Host.OCIRuntime.Name}}'], {
    env: podmanEnv(),
    encoding: 'utf8',
  });
  if (info.status !== 0) return `podman cannot run here: ${info.stderr.trim().split('\n').pop()}`;
  return null;
}

/** ${NAME:-default} and ${NAME} as compose interpolates them; $$ is a literal $. */
export function interpolate(text, env) {
  return text.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}/g,
    (match, name, fallback) => {
      if (match === '$$') return '$$';
      const value = env[name];
      return value === undefined || value === '' ? (fallback ?? '') : value;
    },
  );
}

/**
 * A later compose file over an earlier one, as `docker-compose -f a -f b` layers them for what
 * this project's files hold: maps merge key by key; any other value, a list too, is the later
 * file's (so an override names a service's env files or volumes whole, as
 * docker-compose.s3.yml does).
 */
export function layerCompose(base, over) {
  const isMap = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isMap(base) || !isMap(over)) return over;
  const out = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = layerCompose(base[key], value);
  return out;
}

/**
 * The compose files, interpolated with `env` (image names, COMPOSE_ENV_DIR, published
 * addresses) and layered in order (paths relative to the repository).
 */
export function loadCompose(env, files = ['docker-compose.yml']) {
  return files
    .map((file) =>
      parse(interpolate(readFileSync(resolve(ROOT, file), 'utf8'), env), { merge: true }),
    )
    .reduce(layerCompose);
}

/** Services in an order that starts every dependency first. */
export function startOrder(services) {
  const order = [];
  const visit = (name, path = []) => {
    if (order.includes(name)) return;
    if (path.includes(name)) throw new Error(`depends_on cycle: ${[...path, name].join(' -> ')}`);
    for (const dep of Object.keys(services[name].depends_on ?? {})) visit(dep, [...path, name]);
    order.push(name);
  };
  Object.keys(services).forEach((name) => visit(name));
  return order;
}

const unescape = (value) => String(value).replaceAll('$$', '$');

/** The `podman create` arguments of one compose service inside the pod. */
export function createArgs(project, name, service) {
  const args = [
    'create',
    '--pod',
    project,
    '--name',
    `${project}-${name}`,
    '--label',
    `rds.service=${name}`,
  ];
  if (service.restart && service.restart !== 'no') args.push('--restart', service.restart);
  if (service.read_only) args.push('--read-only');
  for (const mount of service.tmpfs ?? []) args.push('--tmpfs', mount);
  for (const opt of service.security_opt ?? []) args.push('--security-opt', opt);
  for (const cap of service.cap_drop ?? []) args.push('--cap-drop', cap);
  if (service.user) args.push('--user', String(service.user));
  if (service.mem_limit)
    args.push('--memory', String(service.mem_limit), '--memory-swap', String(service.mem_limit));
  if (service.cpus) args.push('--cpus', String(service.cpus));
  for (const file of service.env_file ?? []) args.push('--env-file', resolve(ROOT, file));
  for (const [key, value] of Object.entries(service.environment ?? {}))
    args.push('--env', `${key}=${value}`);
  for (const volume of service.volumes ?? []) {
    const [source, ...rest] = volume.split(':');
    const named = !source.startsWith('.') && !source.startsWith('/');
    args.push(
      '--volume',
      [named ? `${project}_${source}` : resolve(ROOT, source), ...rest].join(':'),
    );
  }
  const check = service.healthcheck;
  if (check?.test) {
    const [kind, ...rest] = check.test;
    // podman 4.3 takes a JSON array as CMD (without the word) and a plain string as CMD-SHELL.
    args.push(
      '--health-cmd',
      kind === 'CMD-SHELL' ? unescape(rest.join(' ')) : JSON.stringify(rest.map(unescape)),
    );
    if (check.interval) args.push('--health-interval', check.interval);
    if (check.timeout) args.push('--health-timeout', check.timeout);
    if (check.retries) args.push('--health-retries', String(check.retries));
    if (check.start_period) args.push('--health-start-period', check.start_period);
  }
  if (service.stop_grace_period)
    args.push('--stop-timeout', String(parseInt(service.stop_grace_period, 10)));
  args.push(service.image);
  for (const part of service.command ?? []) args.push(unescape(part));
  return args;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The container's state: status, exit code, OOM flag, restart count, health. */
export function inspect(container) {
  const format = '{{json .State}}|{{.RestartCount}}';
  const { stdout } = podman(['inspect', '--format', format, container]);
  const [stateJson, restarts] = stdout.split('|');
  const state = JSON.parse(stateJson);
  return {
    status: state.Status,
    exitCode: state.ExitCode,
    oomKilled: state.OOMKilled,
    restarts: Number(restarts),
    startedAt: state.StartedAt,
    health: state.Health?.Status ?? state.Healthcheck?.Status ?? '',
  };
}

/**
 * Podman schedules healthchecks with systemd timers; where there is no systemd (containers in
 * CI, these VMs) nobody runs them, so we run the check ourselves, on the compose file's interval,
 * until it passes or its retries after the start period are spent.
 */
export async function waitHealthy(container, check, timeoutMs = 180_000) {
  const deadline = Date.now() + timeoutMs;
  const interval = Math.min(parseDuration(check.interval ?? '5s'), 2000);
  while (Date.now() < deadline) {
    const state = inspect(container);
    if (state.status === 'exited' && state.restarts === 0) {
      throw new Error(
        `${container} exited (${state.exitCode}) before it became healthy:\n${logsTail(container)}`,
      );
    }
    if (
      state.status === 'running' &&
      podman(['healthcheck', 'run', container], { allowFail: true }).status === 0
    )
      return;
    await sleep(interval);
  }
  throw new Error(`${container} not healthy within ${timeoutMs / 1000} s:\n${logsTail(container)}`);
}

export async function waitExited(container, timeoutMs = 180_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const state = inspect(container);
    if (state.status === 'exited') {
      if (state.exitCode !== 0)
        throw new Error(`${container} failed (${state.exitCode}):\n${logsTail(container)}`);
      return;
    }
    await sleep(500);
  }
  throw new Error(`${container} did not finish within ${timeoutMs / 1000} s`);
}

/** The container's last log lines (podman returns its stdout and stderr apart). */
export function logsTail(container, lines = 30) {
  const { stdout, stderr } = podman(['logs', '--tail', String(lines), container], {
    allowFail: true,
  });
  return `${stdout}\n${stderr}`;
}

function parseDuration(text) {
  const match = /^(\d+)(ms|s|m)$/.exec(String(text));
  if (!match) return 5000;
  return Number(match[1]) * { ms: 1, s: 1000, m: 60_000 }[match[2]];
}

/** Published ports of every service, on the pod (services share its network). */
function publishArgs(services) {
  return Object.values(services).flatMap((service) =>
    (service.ports ?? []).flatMap((port) => ['--publish', String(port)]),
  );
}

export class Stack {
  /**
   * @param {{project: string, env: Record<string, string>, publish?: string[], files?: string[]}} options env: what
   * the compose file is interpolated with; publish: more `host:port:podPort` of the pod (the
   * deployment test reaches containers it adds to the pod through them); files: the compose
   * files, layered (docker-compose.yml and its overrides)
   */
  constructor({ project, env, publish = [], files = ['docker-compose.yml'] }) {
    this.project = project;
    this.env = env;
    this.publish = publish;
    this.files = files;
    this.compose = loadCompose(env, files);
    this.services = this.compose.services;
  }

  container(name) {
    return `${this.project}-${name}`;
  }

  podExists() {
    return podman(['pod', 'exists', this.project], { allowFail: true }).status === 0;
  }

  /**
   * Creates what is missing (pod, volumes, containers) and starts the services in dependency order, health-gated.
   * `only`: those services alone (a restore fills the database before the apps start).
   */
  async up({ log = () => {}, only } = {}) {
    const wanted = (name) => only === undefined || only.includes(name);
    if (!this.podExists()) {
      const hosts = Object.keys(this.services).flatMap((name) => [
        '--add-host',
        `${name}:127.0.0.1`,
      ]);
      podman([
        'pod',
        'create',
        '--name',
        this.project,
        '--infra-name',
        `${this.project}-infra`,
        ...hosts,
        ...publishArgs(this.services),
        ...this.publish.flatMap((port) => ['--publish', port]),
      ]);
    }
    for (const volume of Object.keys(this.compose.volumes ?? {})) {
      const name = `${this.project}_${volume}`;
      if (podman(['volume', 'exists', name], { allowFail: true }).status !== 0)
        podman(['volume', 'create', name]);
    }
    for (const name of startOrder(this.services).filter(wanted)) {
      const service = this.services[name];
      for (const [dep, { condition } = {}] of Object.entries(service.depends_on ?? {})) {
        if (condition === 'service_healthy')
          await waitHealthy(this.container(dep), this.services[dep].healthcheck);
        if (condition === 'service_completed_successfully') await waitExited(this.container(dep));
      }
      const exists =
        podman(['container', 'exists', this.container(name)], { allowFail: true }).status === 0;
      if (!exists) podman(createArgs(this.project, name, service));
      // A finished one-shot (the migration) runs again on every `up`: it applies what is pending.
      if (inspect(this.container(name)).status !== 'running')
        podman(['start', this.container(name)]);
      log(`${name} started`);
    }
    for (const name of Object.keys(this.services).filter(wanted)) {
      if (this.services[name].healthcheck)
        await waitHealthy(this.container(name), this.services[name].healthcheck);
    }
  }

  /**
   * Stops every container (volumes and containers kept), dependents first, as compose does:
   * stopped together, the worker's graceful shutdown waits for a Redis that is already gone.
   */
  stop() {
    if (!this.podExists()) return;
    for (const name of startOrder(this.services).reverse()) {
      const grace = parseInt(this.services[name].stop_grace_period ?? '30', 10);
      podman(['stop', '--time', String(grace), this.container(name)], { allowFail: true });
    }
    podman(['pod', 'stop', '--time', '10', this.project], { allowFail: true });
  }

  /** Removes the pod and its containers; `purge` removes the volumes too. */
  down({ purge = false } = {}) {
    this.stop();
    if (this.podExists()) podman(['pod', 'rm', '--force', '--time', '10', this.project]);
    if (purge) {
      for (const volume of Object.keys(this.compose.volumes ?? {})) {
        podman(['volume', 'rm', '--force', `${this.project}_${volume}`], { allowFail: true });
      }
    }
  }

  /** A named volume of the stack, as podman calls it. */
  volume(name) {
    return `${this.project}_${name}`;
  }

  /**
   * A one-off command in the pod from the app image (the demo loaders), as the image's user;
   * with `detach` (a container name) it runs in the background and is kept until removed.
   */
  run(
    args,
    {
      volumes = [],
      envFiles = [],
      env = {},
      image = this.services['catalog-api'].image,
      detach,
    } = {},
  ) {
    const argv = [
      'run',
      ...(detach ? ['--detach', '--name', detach] : ['--rm']),
      '--pod',
      this.project,
      '--read-only',
      '--tmpfs',
      '/tmp',
      '--cap-drop',
      'ALL',
      '--security-opt',
      'no-new-privileges',
    ];
    for (const v of volumes) argv.push('--volume', v);
    for (const f of envFiles) argv.push('--env-file', f);
    for (const [k, v] of Object.entries(env)) argv.push('--env', `${k}=${v}`);
    return podman([...argv, image, ...args]);
  }
}
