import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { K8sObject, renderKustomization } from './support/kustomize';
import { NetworkModel, NetworkPolicy, Pod, selects } from './support/network-policies';

/**
 * Every flow the features need, evaluated through the NetworkPolicies an operator really applies:
 * the prod overlays with each combination of the optional components, and a site's own overlay
 * on top of prod (its own tag, every component). The flows: the ingress controller and the
 * gateway's proxies to every backend port their routes name, Prometheus to every port it scrapes
 * (ServiceMonitor endpoints and the pods' prometheus.io/port annotations), and the provisioner's
 * API (DRS grant checks) and worker (registrations) to catalog-api. The evaluator is
 * test/support/network-policies.ts.
 */

const ROOT = join(__dirname, '..');
const NAMESPACE = 'research-data';

interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    containers: {
      name: string;
      ports?: { name?: string; containerPort: number }[];
      envFrom?: { configMapRef?: { name: string } }[];
    }[];
  };
}

interface ServiceSpec {
  selector: Record<string, string>;
  ports: { name?: string; port: number; targetPort?: number | string }[];
}

const COMPONENTS = ['gateway-api', 'keda', 'prometheus-operator', 'drs-offload'] as const;
type Component = (typeof COMPONENTS)[number];
const PARAMETERS: Partial<Record<Component, string>> = {
  'gateway-api': 'k8s/components/gateway-api/parameters.example.yaml',
  keda: 'k8s/components/keda/parameters.example.yaml',
  'prometheus-operator': 'k8s/components/prometheus-operator/parameters.example.yaml',
};

/** Where the pods outside the app run (the parameters' examples and the documented namespaces). */
const INGRESS_CONTROLLER: Pod = {
  name: 'ingress-nginx controller',
  namespace: 'ingress-nginx',
  labels: { 'app.kubernetes.io/name': 'ingress-nginx' },
  ports: [],
};
const PROMETHEUS: Pod = {
  name: 'Prometheus',
  namespace: 'monitoring',
  labels: { 'app.kubernetes.io/name': 'prometheus' },
  ports: [],
};
const OUTSIDER: Pod = {
  name: 'a pod of another namespace',
  namespace: 'elsewhere',
  labels: { 'app.kubernetes.io/name': 'prometheus' },
  ports: [],
};

/** A kustomization in a temporary folder, rendered by kubectl (paths relative: kustomize wants them so). */
function renderTemporary(
  lines: (dir: string) => string[],
  files: Record<string, string> = {},
): K8sObject[] {
  const dir = mkdtempSync(join(tmpdir(), 'k8s-flows-'));
  try {
    for (const [name, file] of Object.entries(files))
      copyFileSync(join(ROOT, file), join(dir, name));
    writeFileSync(join(dir, 'kustomization.yaml'), lines(dir).join('\n') + '\n');
    return renderDir(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const renderDir = renderKustomization;

function renderWith(
  overlay: string,
  components: readonly (Component | 'postgres-queue')[],
): K8sObject[] {
  const parameterFiles = Object.fromEntries(
    components.flatMap((c) => {
      const parameters = c === 'postgres-queue' ? undefined : PARAMETERS[c];
      return parameters ? [[`${c}-parameters.yaml`, parameters]] : [];
    }),
  );
  return renderTemporary(
    (dir) => [
      'apiVersion: kustomize.config.k8s.io/v1beta1',
      'kind: Kustomization',
      'resources:',
      `  - ${relative(dir, join(ROOT, 'k8s/overlays', overlay))}`,
      ...Object.keys(parameterFiles).map((name) => `  - ${name}`),
      'components:',
      ...components.map((c) => `  - ${relative(dir, join(ROOT, 'k8s/components', c))}`),
    ],
    parameterFiles,
  );
}

/** Every subset of the components. */
function subsets<T>(items: readonly T[]): T[][] {
  return items.reduce<T[][]>(
    (all, item) => [...all, ...all.map((subset) => [...subset, item])],
    [[]],
  );
}

/**
 * The components that change who talks to which port, in every combination (keda adds no flow,
 * and is in the site overlay's set of all four); drs-offload needs filesystem storage, so not
 * with prod-s3.
 */
const FLOW_COMPONENTS: Component[] = ['gateway-api', 'prometheus-operator', 'drs-offload'];
const renders: [string, () => K8sObject[]][] = [
  ...subsets(FLOW_COMPONENTS).map((components): [string, () => K8sObject[]] => [
    `prod + ${components.join(' + ') || 'no component'}`,
    () => renderWith('prod', components),
  ]),
  ...subsets(FLOW_COMPONENTS.filter((c) => c !== 'drs-offload')).map(
    (components): [string, () => K8sObject[]] => [
      `prod-s3 + ${components.join(' + ') || 'no component'}`,
      () => renderWith('prod-s3', components),
    ],
  ),
  ['prod + every component', () => renderWith('prod', COMPONENTS)],
  // A site's own overlay on top of prod: its own tag and hosts, every component (docs/operations.md).
  ['the site overlay k8s/examples/site', () => renderDir(join(ROOT, 'k8s/examples/site'))],
];

function templateOf(workload: K8sObject): PodTemplate {
  return (workload.spec as { template: PodTemplate }).template;
}

/** The app's pods, one per workload (every replica has the same labels and ports). */
function podsOf(objects: K8sObject[]): Pod[] {
  return objects
    .filter((o) => ['Deployment', 'StatefulSet', 'Job'].includes(o.kind))
    .map((workload) => {
      const template = templateOf(workload);
      return {
        name: workload.metadata.name,
        namespace: workload.metadata.namespace ?? NAMESPACE,
        labels: template.metadata?.labels ?? {},
        ports: template.spec.containers.flatMap((c) => c.ports ?? []),
      };
    });
}

function find(objects: K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`${kind}/${name} is not rendered`);
  return found;
}

/** A Service's port (by name or number) as the container ports of the pods behind it. */
function endpointsOf(
  objects: K8sObject[],
  serviceName: string,
  port: number | string,
): { pod: Pod; port: number }[] {
  const spec = find(objects, 'Service', serviceName).spec as unknown as ServiceSpec;
  const servicePort = spec.ports.find((p) => p.name === port || p.port === port);
  if (!servicePort) throw new Error(`Service ${serviceName} has no port ${port}`);
  const target = servicePort.targetPort ?? servicePort.port;
  const pods = podsOf(objects).filter((pod) => selects({ matchLabels: spec.selector }, pod.labels));
  if (pods.length === 0) throw new Error(`Service ${serviceName} selects no pod`);
  return pods.map((pod) => {
    const number =
      typeof target === 'number' ? target : pod.ports.find((p) => p.name === target)?.containerPort;
    if (number === undefined) throw new Error(`${pod.name} has no port named ${target}`);
    return { pod, port: number };
  });
}

interface Flow {
  flow: string;
  source: Pod;
  destination: Pod;
  port: number;
}

function ingressFlows(objects: K8sObject[]): Flow[] {
  return objects
    .filter((o) => o.kind === 'Ingress')
    .flatMap((ingress) =>
      (
        ingress.spec as {
          rules: {
            host: string;
            http: {
              paths: {
                path: string;
                backend: { service: { name: string; port: { name?: string; number?: number } } };
              }[];
            };
          }[];
        }
      ).rules.flatMap((rule) =>
        rule.http.paths.flatMap(({ path, backend }) =>
          endpointsOf(
            objects,
            backend.service.name,
            backend.service.port.name ?? backend.service.port.number!,
          ).map(({ pod, port }) => ({
            flow: `ingress ${rule.host}${path}`,
            source: INGRESS_CONTROLLER,
            destination: pod,
            port,
          })),
        ),
      ),
    );
}

function gatewayFlows(objects: K8sObject[]): Flow[] {
  const parameters = objects.find(
    (o) => o.kind === 'ConfigMap' && o.metadata.name === 'gateway-api-parameters',
  );
  const routes = objects.filter((o) => o.kind === 'HTTPRoute');
  if (routes.length === 0) return [];
  // The parameters are local-config, so not rendered: the example's namespace is the one used.
  const proxies: Pod = {
    name: 'gateway proxy',
    namespace: parameters?.data?.controllerNamespace ?? 'envoy-gateway-system',
    labels: { 'app.kubernetes.io/name': 'envoy' },
    ports: [],
  };
  return routes.flatMap((route) =>
    (
      route.spec as {
        rules: { backendRefs: { name: string; port: number }[] }[];
      }
    ).rules.flatMap((rule, index) =>
      rule.backendRefs.flatMap((ref) =>
        endpointsOf(objects, ref.name, ref.port).map(({ pod, port }) => ({
          flow: `HTTPRoute ${route.metadata.name} rule ${index}`,
          source: proxies,
          destination: pod,
          port,
        })),
      ),
    ),
  );
}

function scrapeFlows(objects: K8sObject[]): Flow[] {
  const annotated = objects
    .filter((o) => o.kind === 'Deployment')
    .flatMap((workload) => {
      const annotations = templateOf(workload).metadata?.annotations ?? {};
      if (annotations['prometheus.io/scrape'] !== 'true') return [];
      const pod = podsOf([workload])[0];
      return [
        {
          flow: `scrape of ${workload.metadata.name}'s prometheus.io/port`,
          source: PROMETHEUS,
          destination: pod,
          port: Number(annotations['prometheus.io/port']),
        },
      ];
    });
  const monitored = objects
    .filter((o) => o.kind === 'ServiceMonitor')
    .flatMap((monitor) => {
      const spec = monitor.spec as {
        selector: { matchExpressions?: { key: string; operator: string; values: string[] }[] };
        endpoints: { port: string }[];
      };
      return objects
        .filter((o) => o.kind === 'Service' && selects(spec.selector, o.metadata.labels ?? {}))
        .flatMap((service) =>
          spec.endpoints
            .filter((endpoint) =>
              (service.spec as unknown as ServiceSpec).ports.some((p) => p.name === endpoint.port),
            )
            .flatMap((endpoint) =>
              endpointsOf(objects, service.metadata.name, endpoint.port).map(({ pod, port }) => ({
                flow: `ServiceMonitor ${monitor.metadata.name} on ${service.metadata.name}:${endpoint.port}`,
                source: PROMETHEUS,
                destination: pod,
                port,
              })),
            ),
        );
    });
  return [...annotated, ...monitored];
}

/** Each process that calls catalog-api, through the URL its settings name. */
function catalogFlows(objects: K8sObject[]): Flow[] {
  const pods = podsOf(objects);
  return ['provisioner-api', 'provisioner-worker'].flatMap((name) => {
    const container = templateOf(find(objects, 'Deployment', name)).spec.containers.find(
      (c) => c.name === name,
    )!;
    const config = find(objects, 'ConfigMap', container.envFrom![0].configMapRef!.name);
    const url = new URL(config.data!.CATALOG_URL);
    return endpointsOf(objects, url.hostname, Number(url.port)).map(({ pod, port }) => ({
      flow: `${name} to the catalog (${url.href})`,
      source: pods.find((p) => p.name === name)!,
      destination: pod,
      port,
    }));
  });
}

function modelOf(objects: K8sObject[]): NetworkModel {
  return new NetworkModel(
    objects.filter((o) => o.kind === 'NetworkPolicy') as unknown as NetworkPolicy[],
    [],
  );
}

function denied(objects: K8sObject[], flows: Flow[]): string[] {
  const model = modelOf(objects);
  return flows.flatMap(({ flow, source, destination, port }) => {
    const { allowed, reason } = model.admits(source, destination, port);
    return allowed ? [] : [`${flow}: ${reason}`];
  });
}

describe.each(renders)('%s', (_name, render) => {
  const objects = render();
  const pods = podsOf(objects);
  const pod = (name: string) => pods.find((p) => p.name === name)!;

  it('routes DRS objects and access URLs through every entrance, with no total time-out on the bytes', () => {
    const ingressPaths = objects
      .filter((o) => o.kind === 'Ingress')
      .flatMap((ingress) =>
        (
          ingress.spec as {
            rules: {
              http: { paths: { path: string; backend: { service: { name: string } } }[] };
            }[];
          }
        ).rules.flatMap((rule) =>
          rule.http.paths.map((p) => `${p.path} -> ${p.backend.service.name}`),
        ),
      );
    expect(ingressPaths).toEqual(
      expect.arrayContaining([
        '/ga4gh/drs/v1 -> provisioner-api',
        '/drs-bytes/ -> provisioner-api',
      ]),
    );
    const routes = objects.filter((o) => o.kind === 'HTTPRoute');
    if (routes.length === 0) return;
    const rules = routes.flatMap((route) =>
      (
        route.spec as {
          rules: {
            matches: { path: { value: string } }[];
            backendRefs: { name: string }[];
            timeouts?: { request?: string; backendRequest?: string };
          }[];
        }
      ).rules.flatMap((rule) =>
        rule.matches.map((match) => ({
          path: match.path.value,
          backend: rule.backendRefs.map((ref) => ref.name).join(),
          request: rule.timeouts?.request,
          backendRequest: rule.timeouts?.backendRequest,
        })),
      ),
    );
    expect(rules.find((rule) => rule.path === '/ga4gh/drs/v1')?.backend).toBe('provisioner-api');
    // Zero disables a Gateway API time-out (GEP-1742); absent, the implementation's default applies.
    expect(rules.find((rule) => rule.path === '/drs-bytes/')).toEqual({
      path: '/drs-bytes/',
      backend: 'provisioner-api',
      request: '0s',
      backendRequest: undefined,
    });
  });

  it('admits the ingress controller to every backend port of every Ingress path', () => {
    const flows = ingressFlows(objects);
    expect(flows.length).toBeGreaterThan(0);
    expect(denied(objects, flows)).toEqual([]);
  });

  it("admits the gateway's proxies to every backend port of every HTTPRoute", () => {
    expect(denied(objects, gatewayFlows(objects))).toEqual([]);
  });

  it('admits Prometheus to every port it scrapes', () => {
    const flows = scrapeFlows(objects);
    expect(flows.length).toBeGreaterThanOrEqual(3);
    expect(denied(objects, flows)).toEqual([]);
  });

  it("admits the provisioner's API (DRS grant checks) and worker (registrations) to catalog-api", () => {
    const flows = catalogFlows(objects);
    expect(flows.map((f) => f.source.name).sort()).toEqual([
      'provisioner-api',
      'provisioner-worker',
    ]);
    expect(denied(objects, flows)).toEqual([]);
  });

  it('denies what no feature needs: other namespaces, the ingress controller to the worker, the catalog to the provisioner', () => {
    const model = modelOf(objects);
    const api = pod('catalog-api');
    expect(model.admits(OUTSIDER, api, 3000).allowed).toBe(false);
    expect(model.admits(INGRESS_CONTROLLER, pod('provisioner-worker'), 3002).allowed).toBe(false);
    expect(model.admits(api, pod('provisioner-api'), 3001).allowed).toBe(false);
    expect(model.admits(INGRESS_CONTROLLER, api, 5432).allowed).toBe(false);
  });
});

/**
 * The managed services of k8s/overlays/prod/managed-services-egress.yaml, at an address inside
 * each example range: who may reach them, with the provisioner's queue on Redis (the base) and on
 * PostgreSQL (the postgres-queue component).
 */
describe('managed PostgreSQL and Redis outside the cluster', () => {
  const outside = (name: string, address: string, port: number): Pod => ({
    name,
    namespace: '(outside the cluster)',
    labels: {},
    ports: [{ containerPort: port }],
    address,
  });
  const postgres = outside('the managed PostgreSQL', '10.20.0.10', 5432);
  const redis = outside('the managed Redis', '10.20.1.10', 6380);

  function reach(objects: K8sObject[]): Record<string, string[]> {
    const model = modelOf(objects);
    return Object.fromEntries(
      podsOf(objects).map((source) => [
        source.name,
        [postgres, redis]
          .filter((service) => model.admits(source, service, service.ports[0].containerPort).allowed)
          .map((service) => service.name),
      ]),
    );
  }

  it('with the queue on Redis: the catalog and its migrations reach PostgreSQL, the provisioner Redis only', () => {
    expect(reach(renderWith('prod', []))).toEqual({
      'catalog-api': ['the managed PostgreSQL'],
      'catalog-migrate-0.1.0': ['the managed PostgreSQL'],
      'provisioner-api': ['the managed Redis'],
      'provisioner-worker': ['the managed Redis'],
    });
  });

  it.each(['prod', 'prod-s3'])(
    '%s with the postgres-queue component: the provisioner reaches PostgreSQL, and nothing reaches Redis',
    (overlay) => {
      expect(reach(renderWith(overlay, ['postgres-queue']))).toEqual({
        'catalog-api': ['the managed PostgreSQL'],
        'catalog-migrate-0.1.0': ['the managed PostgreSQL'],
        'provisioner-api': ['the managed PostgreSQL'],
        'provisioner-worker': ['the managed PostgreSQL'],
      });
    },
  );

  it('an ipBlock admits the addresses of its CIDR except those of an except block, and never a pod', () => {
    const policy: NetworkPolicy = {
      metadata: { name: 'egress', namespace: NAMESPACE },
      spec: {
        podSelector: {},
        policyTypes: ['Egress'],
        egress: [{ to: [{ ipBlock: { cidr: '10.20.0.0/16', except: ['10.20.9.0/24'] } }] }],
      },
    };
    const model = new NetworkModel([policy], []);
    const client: Pod = { name: 'client', namespace: NAMESPACE, labels: {}, ports: [] };
    const at = (address: string) => model.admits(client, outside(address, address, 443), 443);
    expect(at('10.20.255.1').allowed).toBe(true);
    expect(at('10.21.0.1').allowed).toBe(false);
    expect(at('10.20.9.7').allowed).toBe(false);
    expect(model.admits(client, { ...client, name: 'a pod' }, 443).allowed).toBe(false);
  });
});
