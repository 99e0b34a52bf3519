import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';

/**
 * A site's own overlay on top of k8s/overlays/prod (the GitOps layout docs/operations.md
 * documents, k8s/examples/site): its own release from its own registry (with a port), every
 * optional component. Rendered by the real `kubectl kustomize`.
 */

const ROOT = join(__dirname, '..');
const SITE = join(ROOT, 'k8s/examples/site');

interface K8sObject {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
}

interface PodSpec {
  containers: { name: string; image: string }[];
}

async function kustomize(dir: string): Promise<K8sObject[]> {
  const { stdout } = await promisify(execFile)('kubectl', ['kustomize', dir], {
    maxBuffer: 16 << 20,
  });
  return parseAllDocuments(stdout).map((doc) => doc.toJS() as K8sObject);
}

/** An overlay written in a folder under k8s/ (kustomize takes only relative paths). */
async function withOverlays<T>(
  write: (dir: string) => void,
  use: (dir: string) => Promise<T>,
): Promise<T> {
  const dir = mkdtempSync(join(ROOT, 'k8s', '.site-'));
  try {
    write(dir);
    return await use(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function podSpec(object: K8sObject): PodSpec {
  return (object.spec as { template: { spec: PodSpec } }).template.spec;
}

function migrationJobs(objects: K8sObject[]): K8sObject[] {
  return objects.filter(
    (o) => o.kind === 'Job' && o.metadata.labels?.['app.kubernetes.io/name'] === 'catalog-migrate',
  );
}

/** An overlay in `dir` on `base` (a folder) that sets its own image and tag, as documented. */
function writeReleaseOverlay(dir: string, base: string, image: string, tag: string): void {
  mkdirSync(dir, { recursive: true });
  const transformer = relative(dir, join(ROOT, 'k8s/transformers/migration-job-name'));
  const text = [
    'apiVersion: kustomize.config.k8s.io/v1beta1',
    'kind: Kustomization',
    'resources:',
    `  - ${relative(dir, base)}`,
    'images:',
    `  - name: registry.example.org/research-data/research-data-services`,
    `    newName: ${image}`,
    `    newTag: '${tag}'`,
    `    digest: sha256:${'2'.repeat(64)}`,
    'transformers:',
    `  - ${transformer}`,
    '',
  ].join('\n');
  writeFileSync(join(dir, 'kustomization.yaml'), text);
}

it('renders the documented site overlay: its release names the migration Job, pulled from its registry by digest', async () => {
  const objects = await kustomize(SITE);
  const image =
    'registry.site.example:5000/mirror/research-data-services:1.2.0@sha256:' + '1'.repeat(64);
  const jobs = migrationJobs(objects);
  expect(jobs.map((job) => job.metadata.name)).toEqual(['catalog-migrate-1.2.0']);
  const appImages = objects
    .filter((o) => ['Deployment', 'Job'].includes(o.kind))
    .flatMap((o) =>
      podSpec(o)
        .containers.filter((c) => c.name !== 'drs-offload')
        .map((c) => `${o.metadata.name}/${c.name}: ${c.image}`),
    );
  expect(appImages.sort()).toEqual(
    [
      'catalog-api/catalog-api',
      'catalog-migrate-1.2.0/migrate',
      'provisioner-api/provisioner-api',
      'provisioner-worker/provisioner-worker',
    ].map((where) => `${where}: ${image}`),
  );
  // Every component is there, and KEDA alone owns the worker count.
  expect(new Set(objects.map((o) => o.kind))).toEqual(
    expect.objectContaining(new Set(['Gateway', 'HTTPRoute', 'ScaledObject', 'ServiceMonitor'])),
  );
  for (const kind of ['Gateway', 'HTTPRoute', 'ScaledObject', 'ServiceMonitor', 'PrometheusRule'])
    expect({ kind, rendered: objects.some((o) => o.kind === kind) }).toEqual({
      kind,
      rendered: true,
    });
  const worker = objects.find(
    (o) => o.kind === 'Deployment' && o.metadata.name === 'provisioner-worker',
  );
  expect(worker?.spec?.replicas).toBeUndefined();
});

it('is the layout docs/operations.md documents', () => {
  const docs = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
  expect(docs).toContain('k8s/examples/site');
  expect(docs).toContain('k8s/transformers/migration-job-name');
});

it('names the Job by the last release whatever the tags before it held (a dash in prod-level tag included)', async () => {
  const names = await withOverlays(
    (dir) => {
      const image = 'registry.example.org/research-data/research-data-services';
      const prodLike = join(dir, 'release-candidate');
      writeReleaseOverlay(prodLike, join(ROOT, 'k8s/overlays/prod'), image, '1.2.0-rc.1');
      writeReleaseOverlay(join(dir, 'site'), prodLike, image, '1.2.1');
    },
    async (dir) => [
      migrationJobs(await kustomize(join(dir, 'release-candidate')))[0].metadata.name,
      migrationJobs(await kustomize(join(dir, 'site')))[0].metadata.name,
    ],
  );
  expect(names).toEqual(['catalog-migrate-1.2.0-rc.1', 'catalog-migrate-1.2.1']);
});

it('fails the render, naming the image, when the repository is not research-data-services', async () => {
  const failure = await withOverlays(
    (dir) =>
      writeReleaseOverlay(
        dir,
        join(ROOT, 'k8s/overlays/prod'),
        'registry.site.example:5000/mirror/rds',
        '1.2.0',
      ),
    (dir) =>
      kustomize(dir).then(
        () => 'rendered',
        (error: { stderr?: string }) => error.stderr ?? '',
      ),
  );
  expect(failure).toContain(
    'options.index 1 is out of bounds for value registry.site.example:5000/mirror/rds:1.2.0@sha256:',
  );
});

/** Every string of `value` (keys too) with where it stands; JSON held in a string is walked too. */
function strings(value: unknown, path: string[] = []): { path: string[]; text: string }[] {
  if (typeof value === 'string') {
    if (/^\s*[[{]/.test(value))
      try {
        return strings(JSON.parse(value) as unknown, path);
      } catch {
        // Not JSON: the string itself.
      }
    return [{ path, text: value }];
  }
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, item]) => [
    { path: [...path, '(key)'], text: key },
    ...strings(item, [...path, key]),
  ]);
}

it('names only its own namespace: a site overlay in another namespace renders no reference to research-data', async () => {
  const NAMESPACE = 'lab-x';
  const objects = await withOverlays(
    (dir) => {
      // The documented site overlay, copied as a site takes it, with its own namespace.
      const site = join(dir, 'site');
      mkdirSync(site);
      for (const file of readdirSync(SITE)) {
        const text = readFileSync(join(SITE, file), 'utf8');
        writeFileSync(
          join(site, file),
          file === 'kustomization.yaml'
            ? text.replace(/^namespace: research-data$/m, `namespace: ${NAMESPACE}`)
            : text,
        );
      }
      expect(readFileSync(join(site, 'kustomization.yaml'), 'utf8')).toContain(
        `namespace: ${NAMESPACE}\n`,
      );
    },
    (dir) => kustomize(join(dir, 'site')),
  );
  expect(new Set(objects.map((o) => o.metadata.namespace))).toEqual(new Set([NAMESPACE]));
  // `research-data` standing alone (not a part of research-data-services, research-data-tls, or a
  // label's prefix network.research-data/): a namespace in a query, a selector or a DNS name.
  // Objects may be named research-data (the Ingress, the Gateway, a rule group): names are
  // namespaced, so they are left, and so is the dashboard's tag.
  const standalone = /(?<![\w-])research-data(?![\w/-])/;
  const named = objects.flatMap((o) =>
    strings(o)
      .filter(({ text }) => standalone.test(text))
      .filter(
        ({ path, text }) =>
          !(text === 'research-data' && (path.at(-1) === 'name' || path.at(-2) === 'tags')),
      )
      .map(({ path, text }) => `${o.kind}/${o.metadata.name} ${path.join('.')}: ${text}`),
  );
  expect(named).toEqual([]);
  // The scaling queries select the worker's series of this namespace.
  const scaledObject = objects.find((o) => o.kind === 'ScaledObject')!;
  const queries = (
    scaledObject.spec as { triggers: { metadata: { query: string } }[] }
  ).triggers.map((t) => t.metadata.query);
  expect(queries).toHaveLength(2);
  // And so does the alert on absent targets (absent() sees no other label: another namespace's
  // targets on the same Prometheus would hide this one's).
  const rules = objects.find((o) => o.kind === 'PrometheusRule')!;
  const exprs = (rules.spec as { groups: { rules: { expr: string }[] }[] }).groups
    .flatMap((g) => g.rules.map((r) => r.expr))
    .filter((expr) => expr.includes('absent('));
  expect(exprs).toHaveLength(1);
  for (const query of [...queries, ...exprs])
    expect(new Set(query.match(/namespace="[^"]*"/g))).toEqual(
      new Set([`namespace="${NAMESPACE}"`]),
    );
  expect(exprs[0].match(/absent\(up\{namespace="lab-x", job="[\w-]+"\}\)/g)).toHaveLength(3);
});
