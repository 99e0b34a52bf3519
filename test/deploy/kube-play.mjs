// The dev overlay, rendered by kustomize, run under `podman kube play`
// (docs/decisions/kube-play-of-the-dev-overlay.md). kube play runs Pods and Deployments with their
// security contexts, limits, ConfigMaps, claims and hostAliases; what it lacks is bridged here,
// without touching what the manifests say about each container:
//   - Services: no cluster DNS here, so each pod gets a static address and every pod's
//     hostAliases name the Services (postgres, redis, catalog-api, provisioner-api);
//   - the Job runs as a Pod (its template), first, and must exit 0 before the apps start;
//   - StatefulSets run as Deployments of the same template, their claim templates as claims;
//   - Secrets (dev-secrets.sh's output) become podman secrets in the form kube play reads;
//   - a volume of an optional Secret that is not created (catalog-api's visa keys) is an empty
//     directory, as in Kubernetes; kube play 4.3 refuses to start the pod without the secret;
//   - containerPort: kube play 4.3 publishes each one on the host (where 5432 and 6379 are
//     taken), so the played containers leave `ports` out; pods are reached at their addresses
//     and named probe ports are resolved from the manifest;
//   - probes: kube play 4.3 does not run readiness probes, so each pod's own probes (HTTP or exec,
//     as written) are run here until they pass.
// Every name podman keeps (pods, volumes, secrets, the network) carries a per-run prefix.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { podman, ROOT } from '../../scripts/deploy/podman-stack.mjs';
import { request } from './fixtures.mjs';
import { renderOverlay } from './k8s-schemas.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Start order: the databases, the migration, then the apps. */
const ORDER = [
  'postgres',
  'redis',
  'catalog-migrate',
  'catalog-api',
  'provisioner-api',
  'provisioner-worker',
];
const SERVICE_OF = {
  postgres: 'postgres',
  redis: 'redis',
  'catalog-api': 'catalog-api',
  'provisioner-api': 'provisioner-api',
};

export class KubePlay {
  constructor({ prefix, images }) {
    this.prefix = prefix;
    this.images = images; // { app, postgres, redis }
    this.dir = mkdtempSync(join(tmpdir(), 'rds-kube-'));
    this.pods = {}; // workload -> { pod, ip, spec }
    this.secrets = [];
    this.secretData = {}; // Secret name -> decoded values (podman 4.3 cannot show a secret)
  }

  name(n) {
    return `${this.prefix}-${n}`;
  }

  /** The rendered overlay as the pods kube play gets, in start order. */
  workloads() {
    const objects = renderOverlay('dev');
    const configMaps = objects.filter((o) => o.kind === 'ConfigMap');
    const out = [];
    for (const o of objects) {
      if (!['Deployment', 'StatefulSet', 'Job'].includes(o.kind)) continue;
      const spec = JSON.parse(JSON.stringify(o.spec.template.spec));
      for (const c of spec.containers) {
        c.manifestPorts = c.ports ?? [];
        delete c.ports;
        if (c.image.includes('research-data-services')) c.image = this.images.app;
        else if (c.image.startsWith('postgres:')) c.image = this.images.postgres;
        else if (c.image.startsWith('redis:')) c.image = this.images.redis;
        for (const from of c.envFrom ?? [])
          if (from.secretRef) from.secretRef.name = this.name(from.secretRef.name);
      }
      for (const v of spec.volumes ?? [])
        if (v.persistentVolumeClaim)
          v.persistentVolumeClaim.claimName = this.name(v.persistentVolumeClaim.claimName);
      // A missing optional Secret is an empty directory in Kubernetes; kube play 4.3 refuses to
      // mount it ("no secret with name or id"), so it gets the empty directory here. A Secret
      // dev-secrets.sh makes is mounted by its podman name.
      for (const v of spec.volumes ?? []) {
        if (!v.secret) continue;
        if (this.devSecrets().has(v.secret.secretName))
          v.secret.secretName = this.name(v.secret.secretName);
        else if (v.secret.optional) {
          delete v.secret;
          v.emptyDir = {};
        }
      }
      // kube play 4.3 keeps an emptyDir as a named volume of the same name: one per pod here.
      for (const v of spec.volumes ?? []) {
        if (!v.emptyDir) continue;
        const renamed = this.name(`${o.metadata.name}-${v.name}`);
        for (const c of spec.containers)
          for (const m of c.volumeMounts ?? []) if (m.name === v.name) m.name = renamed;
        v.name = renamed;
      }
      for (const t of o.spec.volumeClaimTemplates ?? []) {
        spec.volumes = [
          ...(spec.volumes ?? []),
          {
            name: t.metadata.name,
            persistentVolumeClaim: {
              claimName: this.name(`${t.metadata.name}-${o.metadata.name}`),
            },
          },
        ];
      }
      const labels = o.spec.template.metadata?.labels ?? {};
      const pod =
        o.kind === 'Job'
          ? {
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: { name: this.name(o.metadata.name), labels },
              spec: { ...spec, restartPolicy: 'Never' },
            }
          : {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              metadata: { name: this.name(o.metadata.name), labels },
              spec: {
                replicas: 1,
                selector: o.spec.selector,
                template: { metadata: { labels }, spec },
              },
            };
      // The migration Job's name carries the release; its workload is the name label.
      const workload =
        o.kind === 'Job' ? o.metadata.labels['app.kubernetes.io/name'] : o.metadata.name;
      out.push({ workload, kind: o.kind, pod, configMaps });
    }
    return out.sort((a, b) => ORDER.indexOf(a.workload) - ORDER.indexOf(b.workload));
  }

  /** dev-secrets.sh's Secrets by name (run once: it makes new random keys each time). */
  devSecrets() {
    if (!this.devSecretsByName) {
      const text = execFileSync('bash', [join(ROOT, 'k8s/overlays/dev/dev-secrets.sh')], {
        encoding: 'utf8',
      });
      this.devSecretsByName = new Map(
        parseAllDocuments(text)
          .map((d) => d.toJS())
          .filter(Boolean)
          .map((secret) => [secret.metadata.name, secret]),
      );
    }
    return this.devSecretsByName;
  }

  /** dev-secrets.sh's Secrets as podman secrets (kube play 4.3 reads a JSON map of base64 values). */
  createSecrets() {
    for (const secret of this.devSecrets().values()) {
      const name = this.name(secret.metadata.name);
      // From a file: podman wants a FIFO on stdin, and Node's stdio pipes are sockets.
      const file = join(this.dir, `${secret.metadata.name}.json`);
      writeFileSync(file, JSON.stringify(secret.data ?? {}), { mode: 0o600 });
      podman(['secret', 'create', name, file]);
      rmSync(file);
      this.secrets.push(name);
      this.secretData[secret.metadata.name] = Object.fromEntries(
        Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
      );
    }
  }

  /** Plays every workload in order; each waits for the previous ones' probes (or exit 0). */
  async up({ log = () => {} } = {}) {
    podman(['network', 'create', this.name('net')]);
    const subnet = podman([
      'network',
      'inspect',
      '--format',
      '{{range .Subnets}}{{.Subnet}}{{end}}',
      this.name('net'),
    ]).stdout;
    const base = subnet.split('/')[0].split('.').slice(0, 3).join('.');
    const workloads = this.workloads();
    workloads.forEach((w, i) => (this.pods[w.workload] = { ip: `${base}.${10 + i}`, spec: w.pod }));
    const aliases = Object.entries(SERVICE_OF).map(([workload, service]) => ({
      ip: this.pods[workload].ip,
      hostnames: [service],
    }));
    this.createSecrets();
    for (const w of workloads) {
      const podSpec = w.pod.kind === 'Pod' ? w.pod.spec : w.pod.spec.template.spec;
      podSpec.hostAliases = aliases;
      const file = join(this.dir, `${w.workload}.yaml`);
      const played = JSON.parse(JSON.stringify(w.pod));
      for (const c of (played.kind === 'Pod' ? played.spec : played.spec.template.spec).containers)
        delete c.manifestPorts;
      writeFileSync(file, [...w.configMaps, played].map((d) => stringify(d)).join('---\n'));
      podman([
        'kube',
        'play',
        '--network',
        this.name('net'),
        '--ip',
        this.pods[w.workload].ip,
        file,
      ]);
      this.pods[w.workload].pod =
        w.pod.kind === 'Pod' ? w.pod.metadata.name : `${w.pod.metadata.name}-pod-0`;
      if (w.kind === 'Job') await this.waitCompleted(w.workload);
      else await this.waitReady(w.workload);
      log(`${w.workload} ${w.kind === 'Job' ? 'completed' : 'ready'}`);
    }
  }

  container(workload) {
    const { pod, spec } = this.pods[workload];
    const podSpec = spec.kind === 'Pod' ? spec.spec : spec.spec.template.spec;
    return { name: `${pod}-${podSpec.containers[0].name}`, spec: podSpec.containers[0] };
  }

  async waitCompleted(workload, timeoutMs = 120_000) {
    const { name } = this.container(workload);
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const [status, code] = podman([
        'inspect',
        '--format',
        '{{.State.Status}} {{.State.ExitCode}}',
        name,
      ]).stdout.split(' ');
      if (status === 'exited') {
        if (code !== '0')
          throw new Error(
            `${workload} exited ${code}: ${podman(['logs', '--tail', '20', name], { allowFail: true }).stderr}`,
          );
        return;
      }
      await sleep(500);
    }
    throw new Error(`${workload} did not complete within ${timeoutMs / 1000} s`);
  }

  /** Runs the container's own readiness probe (HTTP GET or exec) until it passes. */
  async probe(workload) {
    const { name, spec } = this.container(workload);
    const probe = spec.readinessProbe;
    if (probe.httpGet) {
      const port =
        typeof probe.httpGet.port === 'number'
          ? probe.httpGet.port
          : spec.manifestPorts.find((p) => p.name === probe.httpGet.port).containerPort;
      const url = `http://${this.pods[workload].ip}:${port}${probe.httpGet.path}`;
      const { status } = await request(url, { timeoutMs: (probe.timeoutSeconds ?? 1) * 1000 });
      return status >= 200 && status < 400;
    }
    return podman(['exec', name, ...probe.exec.command], { allowFail: true }).status === 0;
  }

  async waitReady(workload, timeoutMs = 120_000) {
    const deadline = Date.now() + timeoutMs;
    const { name } = this.container(workload);
    while (Date.now() < deadline) {
      if (await this.probe(workload).catch(() => false)) return;
      const status = podman(['inspect', '--format', '{{.State.Status}}', name]).stdout;
      if (status === 'exited')
        throw new Error(
          `${workload} exited: ${podman(['logs', '--tail', '20', name], { allowFail: true }).stderr.slice(-600)}`,
        );
      await sleep(1000);
    }
    throw new Error(`${workload} not ready on its probe within ${timeoutMs / 1000} s`);
  }

  url(workload, port) {
    return `http://${this.pods[workload].ip}:${port}`;
  }

  /** A one-off container from the app image on the pods' network, as uid 1000, read-only. */
  run(args, { volumes = [], env = {} } = {}) {
    const hosts = Object.entries(SERVICE_OF).flatMap(([w, s]) => [
      '--add-host',
      `${s}:${this.pods[w].ip}`,
    ]);
    const argv = [
      'run',
      '--rm',
      '--network',
      this.name('net'),
      ...hosts,
      '--read-only',
      '--tmpfs',
      '/tmp',
      '--user',
      '1000:1000',
      '--cap-drop',
      'ALL',
    ];
    for (const v of volumes) argv.push('--volume', v);
    for (const [k, v] of Object.entries(env)) argv.push('--env', `${k}=${v}`);
    return podman([...argv, this.images.app, ...args]);
  }

  down() {
    for (const { pod } of Object.values(this.pods))
      if (pod) podman(['pod', 'rm', '--force', '--time', '10', pod], { allowFail: true });
    const volumes = podman(['volume', 'ls', '--quiet', '--filter', `name=^${this.prefix}-`], {
      allowFail: true,
    })
      .stdout.split('\n')
      .filter(Boolean);
    for (const v of volumes) podman(['volume', 'rm', '--force', v], { allowFail: true });
    for (const s of this.secrets) podman(['secret', 'rm', s], { allowFail: true });
    podman(['network', 'rm', '--force', this.name('net')], { allowFail: true });
    rmSync(this.dir, { recursive: true, force: true });
  }
}
