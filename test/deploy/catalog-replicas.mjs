// catalog-api replicas added to the compose stack's pod, run as the Deployment's manifest says
// (command, limits, preStop, grace period), and the load balancer in front of them: HAProxy
// from Debian, its backend slots standing for the Service's endpoints. What the kubelet and the
// endpoints controller do around a pod is done here, from the manifest:
//   - a slot takes traffic once the replica's readiness endpoint answers 200 (HAProxy's check of
//     /health/ready, as the readiness probe adds a pod to the endpoints);
//   - terminating a replica: its slot stops taking new requests after ENDPOINT_LAG_MS (the
//     endpoints controller, kube-proxy and the ingress learn of the pod's end at the same time
//     as the kubelet, and take a moment), while the kubelet runs the preStop command in the
//     container, then sends SIGTERM, and SIGKILL when the grace period is over.
// Everything here is asynchronous: the load runs in this process meanwhile.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { parse } from 'yaml';
import { podmanEnv, ROOT } from '../../scripts/deploy/podman-stack.mjs';

/** How long after a pod's deletion its endpoint still takes new connections (a few seconds). */
export const ENDPOINT_LAG_MS = 2_000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** podman, without blocking this process's event loop. */
export function podmanAsync(args, { allowFail = false } = {}) {
  return new Promise((done, fail) => {
    execFile(
      'podman',
      args,
      { env: podmanEnv(), encoding: 'utf8', maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        const status = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        if (status !== 0 && !allowFail)
          return fail(
            new Error(
              `podman ${args.slice(0, 3).join(' ')} … failed: ${stderr.trim().slice(-600)}`,
            ),
          );
        done({ status, stdout: stdout.trim(), stderr: stderr.trim() });
      },
    );
  });
}

/** `podman run` of a detached container in the stack's pod, as the manifests run every one. */
function runInPod(stack, container, args) {
  return podmanAsync([
    ...['run', '--detach', '--pod', stack.project, '--name', container, '--read-only'],
    ...['--user', '1000:1000', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges'],
    ...args,
  ]);
}

/** What k8s/base/catalog-api/deployment.yaml says about the container and its end. */
export function catalogManifest() {
  const deployment = parse(
    readFileSync(join(ROOT, 'k8s/base/catalog-api/deployment.yaml'), 'utf8'),
  );
  const pod = deployment.spec.template.spec;
  const [container] = pod.containers;
  const { limits } = container.resources;
  return {
    command: container.command,
    memory: limits.memory.replace(/Mi$/, 'm').replace(/Gi$/, 'g'),
    cpus: String(limits.cpu).endsWith('m') ? parseInt(limits.cpu, 10) / 1000 : Number(limits.cpu),
    preStop: container.lifecycle.preStop.exec.command,
    graceSeconds: pod.terminationGracePeriodSeconds,
    readiness: container.readinessProbe,
  };
}

/** One catalog-api container in the stack's pod, on `port`, from `image`. */
export class CatalogReplica {
  constructor({ stack, image, envFile, port, name, env = {} }) {
    Object.assign(this, { stack, image, envFile, port, env });
    this.container = stack.container(name);
    this.manifest = catalogManifest();
  }

  async start() {
    const m = this.manifest;
    const env = { ...this.env, PORT: String(this.port), MIGRATIONS_RUN: 'false' };
    await runInPod(this.stack, this.container, [
      ...['--tmpfs', '/tmp', '--memory', m.memory, '--memory-swap', m.memory],
      ...['--cpus', String(m.cpus), '--env-file', this.envFile],
      ...Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
      this.image,
      ...m.command,
    ]);
  }

  /** The container's readiness endpoint, asked from inside it (the probe's view). */
  async ready() {
    const probe = `fetch('http://127.0.0.1:${this.port}${this.manifest.readiness.httpGet.path}').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))`;
    const { status } = await podmanAsync(['exec', this.container, 'node', '-e', probe], {
      allowFail: true,
    });
    return status === 0;
  }

  /**
   * As the kubelet ends a pod: `removeEndpoint` after ENDPOINT_LAG_MS, meanwhile the preStop
   * command, then SIGTERM with what is left of the grace period. Resolves with how the process
   * ended and how long it all took.
   */
  async terminate(removeEndpoint) {
    const m = this.manifest;
    const started = Date.now();
    const endpoint = sleep(ENDPOINT_LAG_MS).then(removeEndpoint);
    await podmanAsync(['exec', this.container, ...m.preStop]);
    const left = Math.max(1, Math.ceil(m.graceSeconds - (Date.now() - started) / 1000));
    await podmanAsync(['stop', '--time', String(left), this.container]);
    await endpoint;
    const [exitCode, oomKilled] = (
      await podmanAsync([
        'inspect',
        '--format',
        '{{.State.ExitCode}} {{.State.OOMKilled}}',
        this.container,
      ])
    ).stdout.split(' ');
    return {
      exitCode: Number(exitCode),
      oomKilled: oomKilled === 'true',
      ms: Date.now() - started,
    };
  }

  async logs(lines = 20) {
    const { stdout, stderr } = await podmanAsync(
      ['logs', '--tail', String(lines), this.container],
      {
        allowFail: true,
      },
    );
    return `${stdout}\n${stderr}`.trim();
  }

  async destroy() {
    await podmanAsync(['rm', '--force', '--time', '0', this.container], { allowFail: true });
  }
}

/**
 * HAProxy in the pod: listens on `port`, one backend slot per replica port, each checked on the
 * readiness path with the probe's time-out. No retries and no redispatch: a request sent to a
 * replica that no longer listens fails, as it does through kube-proxy.
 */
export class LoadBalancer {
  constructor({ stack, image, port, slots, socketDir, readiness }) {
    Object.assign(this, { stack, image, port, slots, socketDir, readiness });
    this.container = stack.container('load-balancer');
  }

  config() {
    const check = this.readiness;
    return [
      'global',
      '  stats socket /run/lb/admin.sock mode 600 level admin',
      '  maxconn 2000',
      'defaults',
      '  mode http',
      '  timeout connect 2s',
      '  timeout client 120s',
      '  timeout server 120s',
      '  timeout http-keep-alive 30s',
      `  timeout check ${check.timeoutSeconds ?? 1}s`,
      '  retries 0',
      'frontend catalog',
      `  bind :${this.port}`,
      '  default_backend replicas',
      'backend replicas',
      '  balance roundrobin',
      `  option httpchk GET ${check.httpGet.path}`,
      '  http-check expect status 200',
      `  default-server check inter 1s fall ${check.failureThreshold ?? 3} rise 1`,
      ...Object.entries(this.slots).map(([name, port]) => `  server ${name} 127.0.0.1:${port}`),
      '',
    ].join('\n');
  }

  async start(configFile) {
    await runInPod(this.stack, this.container, [
      ...[
        '--volume',
        `${configFile}:/etc/lb/haproxy.cfg:ro`,
        '--volume',
        `${this.socketDir}:/run/lb`,
      ],
      ...[this.image, 'haproxy', '-db', '-f', '/etc/lb/haproxy.cfg'],
    ]);
  }

  /** One command of HAProxy's runtime API, over its socket. */
  command(line) {
    return new Promise((done, fail) => {
      const socket = connect(join(this.socketDir, 'admin.sock'));
      let out = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk) => (out += chunk));
      socket.on('end', () => done(out));
      socket.on('error', fail);
      socket.end(`${line}\n`);
    });
  }

  /** Slot name -> 'up' | 'down' | 'maint'. */
  async states() {
    const text = await this.command('show servers state replicas');
    const states = {};
    for (const line of text.split('\n')) {
      const f = line.split(' ');
      if (f.length < 8 || line.startsWith('#')) continue;
      const [name, op, admin] = [f[3], Number(f[5]), Number(f[6])];
      states[name] = admin & 1 ? 'maint' : op === 2 ? 'up' : 'down';
    }
    return states;
  }

  /** The endpoint goes: no new request is sent to the slot; those under way go on. */
  async drain(slot) {
    await this.command(`set server replicas/${slot} state maint`);
  }

  async destroy() {
    await podmanAsync(['rm', '--force', '--time', '0', this.container], { allowFail: true });
  }
}
