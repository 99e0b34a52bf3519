import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getMetadataStorage } from 'class-validator';
import { parseAllDocuments } from 'yaml';
import { isPlaceholderSecret, SettingsError } from '@app/platform';
import { K8sObject, renderKustomization } from './support/kustomize';
import {
  CatalogSettings,
  loadCatalogSettings,
} from '../apps/catalog-api/src/config/catalog.settings';
import {
  loadProvisionerSettings,
  ProvisionerSettings,
} from '../apps/provisioner/src/config/provisioner.settings';

/**
 * Renders every kustomize overlay, with the namespace and claims of its environment (k8s/data),
 * with the real `kubectl kustomize` and checks the objects an operator would apply. kubectl
 * missing is a failure, not a skip: CI must render the overlays.
 */

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

const renderDir = renderKustomization;

/** The app overlay alone (what `kubectl delete -k` or a prune of the app would remove). */
const renderApp = (overlay: string): K8sObject[] => renderDir(join(overlaysDir, overlay));
/** The environment's namespace and claims, applied on their own (k8s/data/<overlay>). */
const renderData = (overlay: string): K8sObject[] => renderDir(join(root, 'k8s', 'data', overlay));
const render = (overlay: string): K8sObject[] => [...renderData(overlay), ...renderApp(overlay)];

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

/** The migration Job, whatever release its name carries. */
function migrationJob(objects: K8sObject[]): K8sObject {
  const jobs = objects.filter(
    (o) => o.kind === 'Job' && o.metadata.labels?.['app.kubernetes.io/name'] === 'catalog-migrate',
  );
  if (jobs.length !== 1) throw new Error(`${jobs.length} migration Jobs rendered`);
  return jobs[0];
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

  it('puts everything in one namespace that it also creates, enforcing the restricted profile', () => {
    const namespace = find(objects, 'Namespace', 'research-data');
    expect(namespace.metadata.labels).toMatchObject({
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/enforce-version': 'latest',
    });
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

  it("runs every app pod under the app's own ServiceAccount, without a token, spread over nodes and zones", () => {
    const accounts = objects.filter((o) => o.kind === 'ServiceAccount');
    expect(accounts.map((o) => o.metadata.name)).toEqual(
      expect.arrayContaining(['research-data-services']),
    );
    for (const workload of workloads.filter((w) =>
      podSpecOf(w).containers.some((c) => APP_IMAGE.test(c.image)),
    )) {
      const pod = podSpecOf(workload) as PodSpec & {
        serviceAccountName?: string;
        automountServiceAccountToken?: boolean;
        topologySpreadConstraints?: { topologyKey: string }[];
      };
      expect({
        name: workload.metadata.name,
        account: pod.serviceAccountName,
        token: pod.automountServiceAccountToken,
      }).toEqual({ name: workload.metadata.name, account: 'research-data-services', token: false });
      if (workload.kind === 'Deployment')
        expect(pod.topologySpreadConstraints?.map((c) => c.topologyKey)).toEqual([
          'kubernetes.io/hostname',
          'topology.kubernetes.io/zone',
        ]);
    }
  });

  it('requests the memory each container may use (its limit): no pod is evicted first under node pressure', () => {
    for (const { where, container } of containers)
      expect({ where, request: container.resources?.requests?.memory }).toEqual({
        where,
        request: container.resources?.limits?.memory,
      });
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
        'node --max-semi-space-size=4 --max-old-space-size=256 dist/apps/catalog-api/apps/catalog-api/src/main.js',
      'provisioner-api':
        'node --max-semi-space-size=4 --max-old-space-size=192 dist/apps/provisioner/apps/provisioner/src/main.js',
      'provisioner-worker':
        'node --max-semi-space-size=4 --max-old-space-size=384 --external-memory-accounted-in-global-limit dist/apps/provisioner/apps/provisioner/src/worker.js',
    });
  });

  it("gives the worker long enough to hand its imports over, and not a copy's length", () => {
    const pod = podSpecOf(find(objects, 'Deployment', 'provisioner-worker'));
    // A drain takes seconds (provisioner-drain.e2e-spec.ts); a node drain waits for the longest.
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(60);
    expect(pod.terminationGracePeriodSeconds).toBeLessThanOrEqual(300);
  });

  it('migrates the catalog schema in a Job, and the catalog pods never migrate on start', () => {
    const job = migrationJob(objects);
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
    expect(missing(podSpecOf(migrationJob(objects)).containers[0], catalogSettings)).toEqual([]);
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
    const job = migrationJob(objects);
    expect(() => loadCatalogSettings(envOf('Job', job.metadata.name))).not.toThrow();
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
        'DRS_CATALOG_BROKER_KEY',
        'DRS_URL_SIGNING_KEY',
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

  it('names the migration Job for the release, so one apply of a new release makes a new Job', () => {
    const job = migrationJob(objects);
    // The tag, also where the image is pinned by tag and digest (`name:tag@sha256:...`).
    const tag = appContainer(objects, 'Deployment', 'catalog-api')
      .image.split('@')[0]
      .split(':')[1];
    expect(job.metadata.name).toBe(`catalog-migrate-${tag}`);
    const [migrate] = podSpecOf(job).containers;
    expect(migrate.image).toBe(appContainer(objects, 'Deployment', 'catalog-api').image);
  });

  it('retries the migration while the database cannot be reached (exit 2) or its pod was evicted, never after a failed migration', () => {
    const spec = migrationJob(objects).spec as {
      backoffLimit: number;
      podFailurePolicy: {
        rules: {
          action: string;
          onExitCodes?: { containerName: string; operator: string; values: number[] };
          onPodConditions?: { type: string }[];
        }[];
      };
    };
    expect(podSpecOf(migrationJob(objects)).restartPolicy).toBe('Never');
    expect(spec.backoffLimit).toBeGreaterThan(0);
    // The first matching rule decides, and an evicted pod exits non-zero too: the disruption
    // rule must come before FailJob, or a node drain fails the release.
    expect(spec.podFailurePolicy.rules).toEqual([
      { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] },
      {
        action: 'FailJob',
        onExitCodes: { containerName: 'migrate', operator: 'NotIn', values: [2] },
      },
    ]);
  });

  it('orders one Argo CD sync: configuration, then the migration (a hook that fails the sync), then catalog-api', () => {
    const wave = (o: K8sObject) =>
      Number(
        (o.metadata as { annotations?: Record<string, string> }).annotations?.[
          'argocd.argoproj.io/sync-wave'
        ] ?? 0,
      );
    const job = migrationJob(objects);
    expect((job.metadata as { annotations?: Record<string, string> }).annotations).toMatchObject({
      'argocd.argoproj.io/hook': 'Sync',
      'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation',
    });
    const catalog = find(objects, 'Deployment', 'catalog-api');
    expect(wave(catalog)).toBeGreaterThan(wave(job));
    const configMaps = podSpecOf(job).containers.flatMap((c) =>
      (c.envFrom ?? [])
        .filter((source) => source.configMapRef)
        .map((source) => find(objects, 'ConfigMap', source.configMapRef!.name)),
    );
    expect(configMaps.length).toBe(1);
    for (const object of [find(objects, 'Namespace', 'research-data'), ...configMaps])
      expect({ name: object.metadata.name, wave: wave(object) <= wave(job) }).toEqual({
        name: object.metadata.name,
        wave: true,
      });
  });

  it('leaves the replica count of an autoscaled Deployment to its autoscaler', () => {
    const autoscaled = objects
      .filter((o) => o.kind === 'HorizontalPodAutoscaler')
      .map((o) => (o.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name);
    expect(autoscaled).toEqual(['catalog-api']);
    for (const name of autoscaled)
      expect({ name, replicas: find(objects, 'Deployment', name).spec?.replicas }).toEqual({
        name,
        replicas: undefined,
      });
  });

  it('names each ConfigMap by a hash of its values, so a settings change rolls the pods that read it', () => {
    const configMaps = objects.filter((o) => o.kind === 'ConfigMap');
    expect(configMaps.map((o) => o.metadata.name.replace(/-[a-z0-9]{10}$/, '')).sort()).toEqual([
      'catalog-api-config',
      'provisioner-config',
    ]);
    // The same overlay with one setting changed names another ConfigMap in the Deployment.
    const dir = mkdtempSync(join(overlaysDir, '..', '.changed-'));
    try {
      writeFileSync(
        join(dir, 'kustomization.yaml'),
        [
          'resources:',
          `  - ../overlays/${overlay}`,
          'patches:',
          '  - patch: |-',
          '      apiVersion: v1',
          '      kind: ConfigMap',
          '      metadata:',
          '        name: catalog-api-config',
          '      data:',
          '        LOG_LEVEL: warn',
          '',
        ].join('\n'),
      );
      const changed = parseAllDocuments(
        execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8', stdio: 'pipe' }),
      ).map((doc) => doc.toJS() as K8sObject);
      const configOf = (objs: K8sObject[]) =>
        appContainer(objs, 'Deployment', 'catalog-api').envFrom?.find((e) => e.configMapRef)
          ?.configMapRef?.name;
      expect(configOf(changed)).toMatch(/^catalog-api-config-[a-z0-9]{10}$/);
      expect(configOf(changed)).not.toBe(configOf(objects));
      expect(find(changed, 'ConfigMap', configOf(changed)!).data?.LOG_LEVEL).toBe('warn');
      expect(
        appContainer(changed, 'Deployment', 'provisioner-api').envFrom?.find((e) => e.configMapRef),
      ).toEqual(
        appContainer(objects, 'Deployment', 'provisioner-api').envFrom?.find((e) => e.configMapRef),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    // The longest request: a 32 MiB catalog import (under 60 s, docs/benchmarks.md); a source
    // listing or diff of the provisioner (seconds).
    ['catalog-api', 60],
    ['provisioner-api', 10],
  ])(
    '%s pauses before SIGTERM and has a grace period longer than the pause and its longest request (%d s)',
    (name, longestRequest) => {
      const pod = podSpecOf(find(objects, 'Deployment', name));
      const preStop = (
        pod.containers[0] as Container & {
          lifecycle?: { preStop?: { exec?: { command: string[] } } };
        }
      ).lifecycle?.preStop?.exec?.command;
      expect(preStop?.[0]).toBe('sleep');
      const pause = Number(preStop?.[1]);
      expect(pause).toBeGreaterThanOrEqual(5);
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(pause + longestRequest);
    },
  );

  it('keeps keys and connection URLs in Secrets, and turns the import schedule on', () => {
    const secretKeys = [...secrets.values()].flatMap((data) => Object.keys(data));
    const configKeys = objects
      .filter((o) => o.kind === 'ConfigMap')
      .flatMap((o) => Object.keys(o.data ?? {}));
    const secretLike = [...catalogSettings, ...provisionerSettings].filter(
      // The identity provider's and the catalog's URLs carry no credential, nor does the
      // provisioner's own public URL (DRS) or the path of a key file (the key itself is a
      // mounted Secret).
      (name) =>
        /KEY|SECRET|_URL$|^SOURCES$/.test(name) &&
        !/^(IDP|CATALOG|DRS_PUBLIC|FDP_INDEX)_URL$|_FILE$/.test(name),
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

  it('claims only the volumes it mounts: ReadWriteMany, ReadWriteOnce on the single-node dev cluster', () => {
    const worker = podSpecOf(find(objects, 'Deployment', 'provisioner-worker'));
    const env = environmentOf(objects, worker.containers[0]);
    const mounted = (pod: PodSpec) =>
      Object.fromEntries(
        (pod.volumes ?? [])
          .filter((v) => v.persistentVolumeClaim)
          .map((v) => [
            v.persistentVolumeClaim!.claimName,
            pod.containers[0].volumeMounts?.find((m) => m.name === v.name),
          ]),
      );
    const claims = objects.filter((o) => o.kind === 'PersistentVolumeClaim');
    const api = podSpecOf(find(objects, 'Deployment', 'provisioner-api'));
    if (usesS3(env)) {
      // Storage is the bucket: no storage volume anywhere.
      expect(Object.keys(mounted(worker))).toEqual(['provisioner-dropzone']);
      expect(Object.keys(mounted(api))).toEqual(['provisioner-dropzone']);
    } else {
      const storage = mounted(worker)['provisioner-storage'];
      expect(storage?.mountPath).toBe(env.get('STORAGE_ROOT'));
      expect(storage?.readOnly).not.toBe(true);
      expect(mounted(api)['provisioner-storage']?.readOnly).toBe(true);
    }
    expect(mounted(worker)['provisioner-dropzone']?.readOnly).toBe(true);
    expect(claims.map((c) => c.metadata.name).sort()).toEqual(Object.keys(mounted(worker)).sort());
    for (const claim of claims)
      expect((claim.spec as { accessModes: string[] }).accessModes).toEqual([
        overlay === 'dev' ? 'ReadWriteOnce' : 'ReadWriteMany',
      ]);
  });

  it('keeps the namespace and the claims out of the app, protected from GitOps prunes', () => {
    const app = renderApp(overlay);
    expect(app.filter((o) => ['Namespace', 'PersistentVolumeClaim'].includes(o.kind))).toEqual([]);
    const data = renderData(overlay);
    expect(new Set(data.map((o) => o.kind))).toEqual(
      new Set(['Namespace', 'PersistentVolumeClaim']),
    );
    for (const object of data)
      expect({ name: object.metadata.name, annotations: object.metadata.annotations }).toEqual({
        name: object.metadata.name,
        annotations: expect.objectContaining({
          'argocd.argoproj.io/sync-options': expect.stringMatching(/(^|,)Prune=false(,|$)/),
          'kustomize.toolkit.fluxcd.io/prune': 'disabled',
        }),
      });
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

  it('lets the worker (registrations) and provisioner-api (DRS grant checks), and only them, reach catalog-api', () => {
    const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
    const label = 'network.research-data/catalog-client';
    const clients = workloads
      .filter(
        (w) =>
          (w.spec as { template?: { metadata?: { labels?: Record<string, string> } } }).template
            ?.metadata?.labels?.[label] === 'true',
      )
      .map((w) => w.metadata.name);
    expect(clients.sort()).toEqual(['provisioner-api', 'provisioner-worker']);
    const specOf = (name: string) => find(objects, 'NetworkPolicy', name).spec;
    expect(specOf('catalog-client-egress')).toEqual({
      podSelector: { matchLabels: { [label]: 'true' } },
      policyTypes: ['Egress'],
      egress: [
        {
          to: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'catalog-api' } } }],
          ports: [{ protocol: 'TCP', port: 'http' }],
        },
      ],
    });
    expect(specOf('catalog-api-from-catalog-clients')).toEqual({
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'catalog-api' } },
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [{ podSelector: { matchLabels: { [label]: 'true' } } }],
          ports: [{ protocol: 'TCP', port: 'http' }],
        },
      ],
    });
    // Their settings point at that Service, and the keys come from their Secret.
    for (const name of ['provisioner-worker', 'provisioner-api']) {
      const env = environmentOf(objects, appContainer(objects, 'Deployment', name));
      expect(env.get('CATALOG_URL')).toBe('http://catalog-api:3000');
      expect(env.has('CATALOG_API_KEY')).toBe(true);
      expect(env.has('DRS_CATALOG_BROKER_KEY')).toBe(true);
    }
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
      migrationJob(objects).metadata.name,
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
