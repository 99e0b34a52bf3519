import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

const ROOT = join(__dirname, '..');

interface Container {
  name: string;
  image: string;
  env?: { name: string; value?: string }[];
  envFrom?: { configMapRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  readinessProbe?: { httpGet?: { port: string }; tcpSocket?: { port: string } };
}

interface K8sObject {
  kind: string;
  metadata: { name: string };
  spec?: {
    template?: {
      metadata?: { annotations?: Record<string, string> };
      spec: { containers: Container[]; terminationGracePeriodSeconds?: number };
    };
    rules?: { host: string }[];
  };
  data?: Record<string, string>;
}

const render = (dir: string): K8sObject[] =>
  parseAllDocuments(
    execFileSync('kubectl', ['kustomize', join(ROOT, dir)], { encoding: 'utf8', stdio: 'pipe' }),
  ).map((doc) => doc.toJS() as K8sObject);
const find = (objects: K8sObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name)!;
const configOf = (objects: K8sObject[], container: Container) =>
  find(objects, 'ConfigMap', container.envFrom!.find((e) => e.configMapRef)!.configMapRef!.name)
    .data!;

describe('k8s/components/drs-offload', () => {
  // kustomize reads only files below a component's folder, so the component carries a copy of
  // the template the tests and the bench run nginx with: a drift would ship an untested server.
  it('carries the very nginx template that the tests run', () => {
    expect(
      readFileSync(join(ROOT, 'k8s/components/drs-offload/drs-offload.conf.template'), 'utf8'),
    ).toBe(readFileSync(join(ROOT, 'deploy/nginx/drs-offload.conf.template'), 'utf8'));
  });

  // The documented site overlay has the component on top of prod.
  const objects = render('k8s/examples/site');
  const pod = find(objects, 'Deployment', 'provisioner-api').spec!.template!;
  const nginx = pod.spec.containers.find((c) => c.name === 'drs-offload')!;
  const api = pod.spec.containers.find((c) => c.name === 'provisioner-api')!;

  // The registry cannot be reached here: whether the digest is one of the tag's is checked by
  // hand when the pin changes (docs/operations.md, "Image pins"). What a test can hold: one pin,
  // well formed, wherever nginx-unprivileged is run (the component, compose's default).
  it('pins one nginx image, tag and digest, in the component and in compose', () => {
    const files = [
      'docker-compose.drs.yml',
      ...(readdirSync(join(ROOT, 'k8s'), { recursive: true }) as string[])
        .filter((f) => /\.ya?ml$/.test(f))
        .map((f) => join('k8s', f)),
    ];
    const text = (file: string) => readFileSync(join(ROOT, file), 'utf8');
    const pins = files.flatMap((file) =>
      [...text(file).matchAll(/nginxinc\/nginx-unprivileged:[\w.-]+@sha256:\w+/g)].map((m) => ({
        file,
        pin: m[0],
      })),
    );
    expect(pins.map((p) => p.file).sort()).toEqual([
      'docker-compose.drs.yml',
      'k8s/components/drs-offload/nginx-sidecar.yaml',
    ]);
    expect(new Set(pins.map((p) => p.pin))).toEqual(new Set([nginx.image]));
    // Every mention of a tag (the refresh command beside the pin) names the pinned one.
    const tags = files.flatMap((file) =>
      [...text(file).matchAll(/nginx-unprivileged:([\w.-]+)/g)].map((m) => m[1]),
    );
    expect(new Set(tags)).toEqual(new Set([nginx.image.split(':')[1].split('@')[0]]));
    const [, tag, digest] = /:(\d+\.\d+\.\d+)@sha256:([0-9a-f]{64})$/.exec(nginx.image) ?? [];
    expect(tag).toBeDefined();
    // Not a placeholder (the examples' sha256:111…): a digest has all sixteen hex digits spread.
    expect(new Set(digest).size).toBeGreaterThan(8);
  });

  it('pins nginx by digest and stops it only after the endpoints dropped the pod', () => {
    expect(nginx.image).toMatch(/^nginxinc\/nginx-unprivileged:[\w.-]+@sha256:[0-9a-f]{64}$/);
    // The API's own pause: both stop serving at the same time, after kube-proxy and the ingress
    // stopped sending here.
    expect(nginx.lifecycle?.preStop?.exec?.command).toEqual(api.lifecycle?.preStop?.exec?.command);
    expect(nginx.lifecycle?.preStop?.exec?.command?.[0]).toBe('sleep');
    expect(pod.spec.terminationGracePeriodSeconds).toBeGreaterThan(
      Number(nginx.lifecycle!.preStop!.exec!.command[1]) + 30,
    );
  });

  it('lets the API and nginx see the client: the sidecar hop is trusted, nginx believes the ingress', () => {
    const config = configOf(objects, api);
    const upstream = nginx.env!.find((e) => e.name === 'UPSTREAM')!.value!;
    expect(config.TRUSTED_PROXIES.split(',')).toEqual(
      expect.arrayContaining(['10.0.0.0/8', upstream.split(':')[0]]),
    );
    expect(nginx.env!.find((e) => e.name === 'REAL_IP_FROM')?.value).toBe('10.0.0.0/8');
    const realIp = objects.find(
      (o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('provisioner-drs-offload-nginx-'),
    )!;
    const template = Object.entries(realIp.data!).find(
      ([name]) => name === 'real-ip.conf.template',
    );
    expect(template?.[1]).toMatch(/^set_real_ip_from \$\{REAL_IP_FROM\};$/m);
    expect(template?.[1]).toMatch(/^real_ip_header X-Forwarded-For;$/m);
  });

  it("serves the Service's port through nginx, the API's own port only inside the pod", () => {
    expect(nginx.ports).toEqual([{ name: 'http', containerPort: 8080 }]);
    expect(api.ports).toEqual([{ name: 'api', containerPort: 3001 }]);
    expect(api.readinessProbe?.httpGet?.port).toBe('api');
    expect(pod.metadata?.annotations?.['prometheus.io/port']).toBe('8080');
  });
});

describe.each(['k8s/overlays/prod', 'k8s/overlays/prod-s3', 'k8s/examples/site'])(
  'DRS in %s',
  (dir) => {
    const objects = render(dir);
    const container = (name: string) =>
      find(objects, 'Deployment', name).spec!.template!.spec.containers.find(
        (c) => c.name === name,
      )!;

    it("serves DRS on the Ingress's provisioner host, trusting the catalog's visas", () => {
      const provisioner = configOf(objects, container('provisioner-api'));
      const catalog = configOf(objects, container('catalog-api'));
      const hosts = find(objects, 'Ingress', 'research-data').spec!.rules!.map((r) => r.host);
      expect(provisioner.DRS_PUBLIC_URL).toBe(`https://${hosts[1]}`);
      expect(provisioner.DRS_VISA_ISSUER).toBe(catalog.CATALOG_SOURCE);
      expect(catalog.CATALOG_SOURCE).toBe(`https://${hosts[0]}`);
      // The catalog signs visas with the key of the mounted Secret catalog-api-visa-keys.
      expect(catalog.GA4GH_VISA_KEY_FILE).toMatch(/^\/etc\/catalog-api\/visa-keys\/[\w.-]+$/);
    });
  },
);
