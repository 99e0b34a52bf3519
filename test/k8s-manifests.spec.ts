import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getMetadataStorage } from 'class-validator';
import { parseAllDocuments } from 'yaml';
import { isPlaceholderSecret, SettingsError } from '@app/platform';
import {
  CatalogSettings,
  loadCatalogSettings,
} from '../apps/catalog-api/src/config/catalog.settings';
import {
  loadProvisionerSettings,
  ProvisionerSettings,
} from '../apps/provisioner/src/config/provisioner.settings';

/**
 * Renders every kustomize overlay with the real `kubectl kustomize` and checks the objects an
 * operator would apply. kubectl missing is a failure, not a skip: CI must render the overlays.
 */

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

interface Probe {
  httpGet?: { path: string; port: number | string };
  exec?: { command: string[] };
}

interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: { name: string; value?: string }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string; optional?: boolean } }[];
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    runAsNonRoot?: boolean;
    capabilities?: { drop?: string[] };
    seccompProfile?: { type: string };
  };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}

interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  restartPolicy?: string;
  terminationGracePeriodSeconds?: number;
  securityContext?: {
    runAsNonRoot?: boolean;
    runAsUser?: number;
    seccompProfile?: { type: string };
  };
  volumes?: { name: string; emptyDir?: unknown; persistentVolumeClaim?: { claimName: string } }[];
}

const WORKLOAD_KINDS = new Set(['Deployment', 'StatefulSet', 'Job', 'CronJob', 'DaemonSet']);
const APP_IMAGE = /research-data-services:/;
const root = join(__dirname, '..');
const overlaysDir = join(root, 'k8s', 'overlays');
const overlays = readdirSync(overlaysDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

function render(overlay: string): K8sObject[] {
  const yamlText = execFileSync('kubectl', ['kustomize', join(overlaysDir, overlay)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return parseAllDocuments(yamlText).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${overlay}: ${doc.errors[0].message}`);
    return doc.toJS() as K8sObject;
  });
}

function podSpecOf(object: K8sObject): PodSpec {
  const spec = object.spec as Record<string, unknown>;
  if (object.kind === 'CronJob') {
    const jobTemplate = spec.jobTemplate as { spec: { template: { spec: PodSpec } } };
    return jobTemplate.spec.template.spec;
  }
  return (spec.template as { spec: PodSpec }).spec;
}

function find(objects: K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`${kind}/${name} is not rendered`);
  return found;
}

/** Settings names, read from the class-validator decorators every setting carries. */
function settingNames(schema: new () => object): string[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(schema, '', true, false);
  return [...new Set(metadata.map((m) => m.propertyName))].sort();
}

/** `KEY=value` lines as `kubectl create secret --from-env-file` reads them (# starts a comment). */
function parseEnvFile(text: string): Record<string, string> {
  const lines = text.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));
  return Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

/** The data of Secret objects, decoded. */
function secretData(objects: K8sObject[]): Map<string, Record<string, string>> {
  return new Map(
    objects
      .filter((o) => o.kind === 'Secret')
      .map((o) => [
        o.metadata.name,
        {
          ...Object.fromEntries(
            Object.entries(o.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
          ),
          ...o.stringData,
        },
      ]),
  );
}

/**
 * The Secrets an operator supplies, since the manifests ship none: the keys and placeholder
 * values of k8s/secrets/<name>.env.example, and for the dev overlay what dev-secrets.sh makes.
 */
function suppliedSecrets(overlay: string): Map<string, Record<string, string>> {
  const dir = join(root, 'k8s', 'secrets');
  const secrets = new Map(
    readdirSync(dir)
      .filter((file) => file.endsWith('.env.example'))
      .map((file) => [
        file.replace(/\.env\.example$/, ''),
        parseEnvFile(readFileSync(join(dir, file), 'utf8')),
      ]),
  );
  if (overlay === 'dev') {
    const made = execFileSync(join(overlaysDir, 'dev', 'dev-secrets.sh'), { encoding: 'utf8' });
    const objects = parseAllDocuments(made).map((doc) => doc.toJS() as K8sObject);
    for (const [name, data] of secretData(objects)) secrets.set(name, data);
  }
  return secrets;
}

/** The environment a container gets from its envFrom ConfigMaps/Secrets and env entries. */
function environmentOfContainer(
  objects: K8sObject[],
  container: Container,
  secrets: Map<string, Record<string, string>>,
): Map<string, string> {
  const env = new Map<string, string>();
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) {
      const configMap = find(objects, 'ConfigMap', source.configMapRef.name);
      for (const [key, value] of Object.entries(configMap.data ?? {})) env.set(key, value);
    }
    if (source.secretRef) {
      const secret = secrets.get(source.secretRef.name);
      if (!secret)
        throw new Error(`Secret ${source.secretRef.name} is neither rendered nor documented`);
      for (const [key, value] of Object.entries(secret)) env.set(key, value);
    }
  }
  for (const { name, value } of container.env ?? []) env.set(name, value ?? '');
  return env;
}

/** A placeholder of the example files replaced by a random value, as an operator would. */
function withRealSecrets(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).map(([key, value]) => [
      key,
      isPlaceholderSecret(value)
        ? value.replace(/EXAMPLE-ONLY-[A-Za-z0-9-]*/g, () => randomBytes(24).toString('hex'))
        : value,
    ]),
  );
}

function refusedSettings(load: () => unknown): string[] {
  try {
    load();
  } catch (error) {
    if (error instanceof SettingsError) return error.problems.map((p) => p.split(' ')[0]).sort();
    throw error;
  }
  return [];
}

function portNumber(container: Container, port: number | string): number | undefined {
  if (typeof port === 'number') return port;
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

function appContainer(objects: K8sObject[], kind: string, name: string): Container {
  const [container] = podSpecOf(find(objects, kind, name)).containers;
  return container;
}

/**
 * The S3 key pair is a Secret only overlays storing in S3 mount (provisioner-s3-secrets): with
 * the filesystem backend the settings mean nothing, and a ConfigMap must never hold them.
 */
const S3_KEY_PAIR = ['S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'];

function usesS3(env: Map<string, string>): boolean {
  return env.get('STORAGE_BACKEND') === 's3';
}

const catalogSettings = settingNames(CatalogSettings);
const provisionerSettings = settingNames(ProvisionerSettings);

it('finds the overlays and the settings to check', () => {
  expect(overlays).toEqual(expect.arrayContaining(['dev', 'prod']));
  expect(catalogSettings).toEqual(
    expect.arrayContaining(['DATABASE_URL', 'GLOBAL_API_KEY', 'MIGRATIONS_RUN']),
  );
  expect(provisionerSettings).toEqual(
    expect.arrayContaining(['REDIS_URL', 'PROVISIONER_API_KEY', 'IMPORT_SCHEDULE']),
  );
});

describe.each(overlays)('overlay %s', (overlay) => {
  const objects = render(overlay);
  const secrets = suppliedSecrets(overlay);
  const environmentOf = (objs: K8sObject[], container: Container) =>
    environmentOfContainer(objs, container, secrets);
  const workloads = objects.filter((o) => WORKLOAD_KINDS.has(o.kind));
  const containers = workloads.flatMap((workload) => {
    const pod = podSpecOf(workload);
    return [...pod.containers, ...(pod.initContainers ?? [])].map((container) => ({
      where: `${workload.kind}/${workload.metadata.name}/${container.name}`,
      workload,
      pod,
      container,
    }));
  });

  it('puts everything in one namespace that it also creates', () => {
    const namespace = find(objects, 'Namespace', 'research-data');
    expect(namespace.metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
    const namespaced = objects.filter((o) => o.kind !== 'Namespace');
    expect(namespaced.filter((o) => o.metadata.namespace !== 'research-data')).toEqual([]);
  });

  it('pins every image to a tag that is not latest', () => {
    expect(containers.length).toBeGreaterThan(0);
    for (const { where, container } of containers) {
      const match = /^(?<name>[^@]+?)(?::(?<tag>[^:/@]+))?(?:@sha256:[0-9a-f]{64})?$/.exec(
        container.image,
      );
      expect({ where, tag: match?.groups?.tag ?? null }).toEqual({
        where,
        tag: expect.any(String),
      });
      expect({ where, tag: match?.groups?.tag }).not.toEqual({ where, tag: 'latest' });
    }
  });

  it('gives every container resource requests and limits', () => {
    for (const { where, container } of containers) {
      for (const kind of ['requests', 'limits'] as const) {
        expect({
          where,
          kind,
          cpu: container.resources?.[kind]?.cpu,
          memory: container.resources?.[kind]?.memory,
        }).toEqual({
          where,
          kind,
          cpu: expect.any(String),
          memory: expect.any(String),
        });
      }
    }
  });

  it('runs every container non-root, read-only, without capabilities or privilege escalation', () => {
    for (const { where, pod, container } of containers) {
      const sc = container.securityContext ?? {};
      expect({
        where,
        allowPrivilegeEscalation: sc.allowPrivilegeEscalation,
        readOnlyRootFilesystem: sc.readOnlyRootFilesystem,
        runAsNonRoot: sc.runAsNonRoot ?? pod.securityContext?.runAsNonRoot,
        drop: sc.capabilities?.drop,
        seccomp: sc.seccompProfile?.type ?? pod.securityContext?.seccompProfile?.type,
      }).toEqual({
        where,
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        drop: ['ALL'],
        seccomp: 'RuntimeDefault',
      });
      expect({ where, runAsUser: pod.securityContext?.runAsUser }).not.toEqual({
        where,
        runAsUser: 0,
      });
    }
  });

  it('gives the app containers a writable /tmp on an emptyDir', () => {
    const apps = containers.filter(({ container }) => APP_IMAGE.test(container.image));
    expect(apps.length).toBeGreaterThanOrEqual(4);
    for (const { where, pod, container } of apps) {
      const mount = container.volumeMounts?.find((m) => m.mountPath === '/tmp');
      const volume = pod.volumes?.find((v) => v.name === mount?.name);
      expect({ where, emptyDir: volume?.emptyDir !== undefined }).toEqual({
        where,
        emptyDir: true,
      });
    }
  });

  it.each([
    ['catalog-api', 3000],
    ['provisioner-api', 3001],
    ['provisioner-worker', 3002],
  ])(
    '%s has startup, liveness and readiness probes on its health endpoints (port %d)',
    (name, port) => {
      const container = appContainer(objects, 'Deployment', name);
      const probes = {
        startup: container.startupProbe?.httpGet,
        liveness: container.livenessProbe?.httpGet,
        readiness: container.readinessProbe?.httpGet,
      };
      expect(Object.fromEntries(Object.entries(probes).map(([k, p]) => [k, p?.path]))).toEqual({
        startup: '/health/live',
        liveness: '/health/live',
        readiness: '/health/ready',
      });
      for (const probe of Object.values(probes))
        expect(portNumber(container, probe!.port)).toBe(port);
    },
  );

  it('runs the three processes as separate Deployments of the one image, with their commands', () => {
    const commands = Object.fromEntries(
      ['catalog-api', 'provisioner-api', 'provisioner-worker'].map((name) => {
        const container = appContainer(objects, 'Deployment', name);
        return [name, [...(container.command ?? []), ...(container.args ?? [])].join(' ')];
      }),
    );
    expect(commands).toEqual({
      'catalog-api':
        'node --max-old-space-size=256 dist/apps/catalog-api/apps/catalog-api/src/main.js',
      'provisioner-api': 'node dist/apps/provisioner/apps/provisioner/src/main.js',
      'provisioner-worker':
        'node --max-semi-space-size=4 dist/apps/provisioner/apps/provisioner/src/worker.js',
    });
  });

  it('gives the worker long enough to finish or release a copy', () => {
    const pod = podSpecOf(find(objects, 'Deployment', 'provisioner-worker'));
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(300);
  });

  it('migrates the catalog schema in a Job, and the catalog pods never migrate on start', () => {
    const job = find(objects, 'Job', 'catalog-migrate');
    const pod = podSpecOf(job);
    const [migrate] = pod.containers;
    expect(migrate.command?.join(' ')).toBe(
      'node dist/apps/catalog-api/apps/catalog-api/src/database/migrate.js',
    );
    expect(['Never', 'OnFailure']).toContain(pod.restartPolicy);
    expect(environmentOf(objects, migrate).get('DATABASE_URL')).toMatch(/^postgres(ql)?:\/\//);

    const catalog = appContainer(objects, 'Deployment', 'catalog-api');
    expect(environmentOf(objects, catalog).get('MIGRATIONS_RUN')).toBe('false');
  });

  it('gives each process every setting of its settings class through a ConfigMap or Secret', () => {
    const missing = (container: Container, names: string[]): string[] => {
      const env = environmentOf(objects, container);
      return names.filter(
        (name) => !env.has(name) && !(S3_KEY_PAIR.includes(name) && !usesS3(env)),
      );
    };
    expect(missing(appContainer(objects, 'Deployment', 'catalog-api'), catalogSettings)).toEqual(
      [],
    );
    expect(missing(appContainer(objects, 'Job', 'catalog-migrate'), catalogSettings)).toEqual([]);
    expect(
      missing(appContainer(objects, 'Deployment', 'provisioner-api'), provisionerSettings),
    ).toEqual([]);
    expect(
      missing(appContainer(objects, 'Deployment', 'provisioner-worker'), provisionerSettings),
    ).toEqual([]);
  });

  it('holds settings values that the apps accept once the Secrets hold real values', () => {
    const envOf = (kind: string, name: string) =>
      withRealSecrets(
        Object.fromEntries(environmentOf(objects, appContainer(objects, kind, name))),
      );
    expect(() => loadCatalogSettings(envOf('Deployment', 'catalog-api'))).not.toThrow();
    expect(() => loadCatalogSettings(envOf('Job', 'catalog-migrate'))).not.toThrow();
    expect(() => loadProvisionerSettings(envOf('Deployment', 'provisioner-api'))).not.toThrow();
    expect(() => loadProvisionerSettings(envOf('Deployment', 'provisioner-worker'))).not.toThrow();
  });

  it('ships no Secret: every pod requires Secrets the operator supplies, documented with their keys', () => {
    expect(objects.filter((o) => o.kind === 'Secret').map((o) => o.metadata.name)).toEqual([]);
    const refs = containers.flatMap(({ where, container }) =>
      (container.envFrom ?? [])
        .filter((source) => source.secretRef)
        .map((source) => ({
          where,
          name: source.secretRef!.name,
          optional: source.secretRef!.optional ?? false,
          documented: secrets.has(source.secretRef!.name),
        })),
    );
    expect(refs.length).toBeGreaterThanOrEqual(4);
    expect(refs).toEqual(refs.map((ref) => ({ ...ref, optional: false, documented: true })));
  });

  it('refuses to start on the example Secret values, naming each placeholder', () => {
    const examples = suppliedSecrets('prod');
    const envOf = (kind: string, name: string, secret: string) => ({
      ...Object.fromEntries(environmentOf(objects, appContainer(objects, kind, name))),
      ...examples.get(secret),
    });
    expect(
      refusedSettings(() =>
        loadCatalogSettings(envOf('Deployment', 'catalog-api', 'catalog-api-secrets')),
      ),
    ).toEqual(['DATABASE_URL', 'GLOBAL_API_KEY']);
    expect(
      refusedSettings(() =>
        loadProvisionerSettings(envOf('Deployment', 'provisioner-api', 'provisioner-secrets')),
      ),
    ).toEqual(
      [
        'CATALOG_API_KEY',
        'PROVISIONER_API_KEY',
        'PROVISIONER_READ_API_KEYS',
        'REDIS_URL',
        // The S3 overlays' pods also read the key pair's Secret, whose example is refused too.
        ...(usesS3(environmentOf(objects, appContainer(objects, 'Deployment', 'provisioner-api')))
          ? ['S3_SECRET_ACCESS_KEY']
          : []),
      ].sort(),
    );
  });

  it('labels what the migration Job needs so it can be applied before the Deployments', () => {
    const job = find(objects, 'Job', 'catalog-migrate');
    // Its Secret is the operator's, created before any apply.
    const needed = [
      find(objects, 'Namespace', 'research-data'),
      ...podSpecOf(job).containers.flatMap((c) =>
        (c.envFrom ?? [])
          .filter((source) => source.configMapRef)
          .map((source) => find(objects, 'ConfigMap', source.configMapRef!.name)),
      ),
    ];
    expect(job.metadata.labels?.['app.kubernetes.io/component']).toBe('migration');
    for (const object of needed) {
      expect({
        name: object.metadata.name,
        component: object.metadata.labels?.['app.kubernetes.io/component'],
      }).toEqual({
        name: object.metadata.name,
        component: 'config',
      });
    }
  });

  it('keeps keys and connection URLs in Secrets, and turns the import schedule on', () => {
    const secretKeys = [...secrets.values()].flatMap((data) => Object.keys(data));
    const configKeys = objects
      .filter((o) => o.kind === 'ConfigMap')
      .flatMap((o) => Object.keys(o.data ?? {}));
    const secretLike = [...catalogSettings, ...provisionerSettings].filter(
      // The identity provider's and the catalog's URLs carry no credential, nor does the path
      // of a key file (the key itself is a mounted Secret).
      (name) => /KEY|SECRET|_URL$|^SOURCES$/.test(name) && !/^(IDP|CATALOG)_URL$|_FILE$/.test(name),
    );
    for (const name of secretLike) {
      expect({
        name,
        inSecret: secretKeys.includes(name),
        inConfigMap: configKeys.includes(name),
      }).toEqual({
        name,
        inSecret: true,
        inConfigMap: false,
      });
    }
    const worker = appContainer(objects, 'Deployment', 'provisioner-worker');
    expect(environmentOf(objects, worker).get('IMPORT_SCHEDULE')).toMatch(/^\S+(\s+\S+){4,5}$/);
  });

  it('mounts the shared storage and drop zone volumes, both ReadWriteMany', () => {
    for (const name of ['provisioner-storage', 'provisioner-dropzone']) {
      const claim = find(objects, 'PersistentVolumeClaim', name);
      expect((claim.spec as { accessModes: string[] }).accessModes).toEqual(['ReadWriteMany']);
    }
    const worker = podSpecOf(find(objects, 'Deployment', 'provisioner-worker'));
    const env = environmentOf(objects, worker.containers[0]);
    const storageMount = worker.containers[0].volumeMounts?.find(
      (m) => m.mountPath === env.get('STORAGE_ROOT'),
    );
    const storageVolume = worker.volumes?.find((v) => v.name === storageMount?.name);
    expect(storageVolume?.persistentVolumeClaim?.claimName).toBe('provisioner-storage');
    expect(storageMount?.readOnly).not.toBe(true);
  });

  it('has disruption budgets for every Deployment and an autoscaler for catalog-api', () => {
    for (const name of ['catalog-api', 'provisioner-api', 'provisioner-worker']) {
      const labels = (
        find(objects, 'Deployment', name).spec as {
          selector: { matchLabels: Record<string, string> };
        }
      ).selector.matchLabels;
      const budgets = objects.filter(
        (o) =>
          o.kind === 'PodDisruptionBudget' &&
          JSON.stringify(
            (o.spec as { selector: { matchLabels: unknown } }).selector.matchLabels,
          ) === JSON.stringify(labels),
      );
      expect({ name, budgets: budgets.length }).toEqual({ name, budgets: 1 });
    }
    const hpa = find(objects, 'HorizontalPodAutoscaler', 'catalog-api');
    expect(
      (hpa.spec as { scaleTargetRef: { kind: string; name: string } }).scaleTargetRef,
    ).toMatchObject({
      kind: 'Deployment',
      name: 'catalog-api',
    });
  });

  it('routes the ingress only to the two APIs', () => {
    const ingresses = objects.filter((o) => o.kind === 'Ingress');
    expect(ingresses.length).toBeGreaterThan(0);
    const services = ingresses.flatMap((ingress) =>
      (
        ingress.spec as {
          rules: { http: { paths: { path: string; backend: { service: { name: string } } }[] } }[];
        }
      ).rules.flatMap((rule) =>
        rule.http.paths.map((p) => ({ path: p.path, service: p.backend.service.name })),
      ),
    );
    expect(new Set(services.map((s) => s.service))).toEqual(
      new Set(['catalog-api', 'provisioner-api']),
    );
    expect(services.filter((s) => /^\/(health|metrics)?$/.test(s.path))).toEqual([]);
  });

  it('denies all traffic by default and admits ingress-controller traffic only to the APIs', () => {
    const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
    const defaultDeny = policies.find((p) => {
      const spec = p.spec as {
        podSelector: object;
        policyTypes: string[];
        ingress?: unknown;
        egress?: unknown;
      };
      return (
        Object.keys(spec.podSelector).length === 0 &&
        spec.policyTypes.includes('Ingress') &&
        spec.policyTypes.includes('Egress') &&
        !spec.ingress &&
        !spec.egress
      );
    });
    expect(defaultDeny).toBeDefined();

    const fromIngressController = policies.filter((p) =>
      JSON.stringify(p.spec).includes('"kubernetes.io/metadata.name":"ingress-nginx"'),
    );
    const targets = fromIngressController.map(
      (p) =>
        (p.spec as { podSelector: { matchLabels?: Record<string, string> } }).podSelector
          .matchLabels?.['app.kubernetes.io/name'],
    );
    expect(targets.sort()).toEqual(['catalog-api', 'provisioner-api']);

    const dns = policies.some((p) => JSON.stringify(p.spec).includes('"port":53'));
    expect(dns).toBe(true);
  });

  it('lets the worker, and only the worker, reach catalog-api (to register imports)', () => {
    const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
    const label = 'network.research-data/catalog-client';
    const clients = workloads
      .filter(
        (w) =>
          (w.spec as { template?: { metadata?: { labels?: Record<string, string> } } }).template
            ?.metadata?.labels?.[label] === 'true',
      )
      .map((w) => w.metadata.name);
    expect(clients).toEqual(['provisioner-worker']);
    const specOf = (name: string) => find(objects, 'NetworkPolicy', name).spec;
    expect(specOf('catalog-client-egress')).toEqual({
      podSelector: { matchLabels: { [label]: 'true' } },
      policyTypes: ['Egress'],
      egress: [
        {
          to: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'catalog-api' } } }],
          ports: [{ protocol: 'TCP', port: 3000 }],
        },
      ],
    });
    expect(specOf('catalog-api-from-catalog-clients')).toEqual({
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'catalog-api' } },
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [{ podSelector: { matchLabels: { [label]: 'true' } } }],
          ports: [{ protocol: 'TCP', port: 3000 }],
        },
      ],
    });
    // The worker's settings point at that Service, and its key comes from its Secret.
    const worker = environmentOf(
      objects,
      appContainer(objects, 'Deployment', 'provisioner-worker'),
    );
    expect(worker.get('CATALOG_URL')).toBe('http://catalog-api:3000');
    expect(worker.has('CATALOG_API_KEY')).toBe(true);
    expect(policies.filter((p) => JSON.stringify(p.spec).includes(label))).toHaveLength(2);
  });

  it('lets only the pods that need Postgres or Redis reach them', () => {
    const clients = (label: string): string[] =>
      workloads
        .filter(
          (w) =>
            (w.spec as { template?: { metadata?: { labels?: Record<string, string> } } }).template
              ?.metadata?.labels?.[label] === 'true',
        )
        .map((w) => w.metadata.name)
        .sort();
    expect(clients('network.research-data/postgres-client')).toEqual([
      'catalog-api',
      'catalog-migrate',
    ]);
    expect(clients('network.research-data/redis-client')).toEqual([
      'provisioner-api',
      'provisioner-worker',
    ]);
    const egressFor = (label: string): K8sObject[] =>
      objects.filter(
        (o) =>
          o.kind === 'NetworkPolicy' &&
          (o.spec as { podSelector: { matchLabels?: Record<string, string> } }).podSelector
            .matchLabels?.[label] === 'true',
      );
    expect(egressFor('network.research-data/postgres-client')).toHaveLength(1);
    expect(egressFor('network.research-data/redis-client')).toHaveLength(1);
  });
});
