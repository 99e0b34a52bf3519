// Every object the manifests can apply, checked offline against the API types of the Kubernetes
// release the docs name and of the custom resources' own releases: each overlay (k8s/overlays),
// each environment's namespace and claims (k8s/data), and the prod overlay with each optional
// component (k8s/components, with its parameters.example.yaml). Two checks per object:
//   - the model's validator (kubernetes-models 5.x, generated from Kubernetes 1.36's OpenAPI
//     document; @kubernetes-models/gateway-api, prometheus-operator and keda from those projects'
//     Go types): required fields, types, formats, enumerations;
//   - the TypeScript compiler on the object as a literal of the model's interface: fields that do
//     not exist (a misspelt one), which the validators let through as Kubernetes' schemas do.
// A kind without a model is an error too. Run by `npm test` (test/k8s-schemas.spec.ts) and
// `npm run test:deploy`; alone: `node test/deploy/k8s-schemas.mjs`.
// Decision: docs/decisions/kubernetes-schemas-offline.md.
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';
import { ROOT } from '../../scripts/deploy/podman-stack.mjs';

const require = createRequire(import.meta.url);
const ts = require('typescript');

/** The Kubernetes release of kubernetes-models 5.x's types (its CHANGELOG: "Update to Kubernetes v1.36.0"). */
export const KUBERNETES_RELEASE = '1.36';
const KUBERNETES_MODELS_MAJOR = '5';

/** Where models are looked up, in order: core types first, then the custom resources'. */
const PACKAGES = [
  'kubernetes-models',
  '@kubernetes-models/gateway-api',
  '@kubernetes-models/prometheus-operator',
  '@kubernetes-models/keda',
];

const kustomize = (dir) =>
  parseAllDocuments(
    execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8', stdio: 'pipe' }),
  )
    .map((doc) => doc.toJS())
    .filter(Boolean);

const dirsOf = (dir) =>
  readdirSync(join(ROOT, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();

/** One overlay as kustomize renders it. */
export function renderOverlay(overlay) {
  return kustomize(join(ROOT, 'k8s/overlays', overlay));
}

/**
 * An overlay with one component added, as an operator's overlay would add it: the component's
 * parameters.example.yaml among the resources, the namespace set. Rendered from a directory inside
 * the repository (kustomize takes only relative paths to other kustomizations).
 */
function renderWithComponent(overlay, component) {
  const cache = join(ROOT, 'node_modules/.cache');
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(join(cache, 'rds-k8s-component-'));
  try {
    const componentDir = join(ROOT, 'k8s/components', component);
    const resources = [relative(dir, join(ROOT, 'k8s/overlays', overlay))];
    if (existsSync(join(componentDir, 'parameters.example.yaml'))) {
      copyFileSync(join(componentDir, 'parameters.example.yaml'), join(dir, 'parameters.yaml'));
      resources.push('parameters.yaml');
    }
    writeFileSync(
      join(dir, 'kustomization.yaml'),
      stringify({
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        namespace: 'research-data',
        resources,
        components: [relative(dir, componentDir)],
      }),
    );
    return kustomize(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every render the manifests allow: [{ name, objects }]. */
export function renderAll() {
  const renders = [];
  for (const overlay of dirsOf('k8s/overlays'))
    renders.push({ name: `overlays/${overlay}`, objects: renderOverlay(overlay) });
  for (const env of dirsOf('k8s/data').filter((d) => d !== 'base'))
    renders.push({ name: `data/${env}`, objects: kustomize(join(ROOT, 'k8s/data', env)) });
  for (const component of dirsOf('k8s/components'))
    renders.push({
      name: `overlays/prod + components/${component}`,
      objects: renderWithComponent('prod', component),
    });
  // The documented layouts of a site's own overlay (prod, every component, its own release).
  for (const example of dirsOf('k8s/examples'))
    renders.push({
      name: `examples/${example}`,
      objects: kustomize(join(ROOT, 'k8s/examples', example)),
    });
  return renders;
}

/** The model of an apiVersion and kind: { Model, specifier, type } or null. */
async function modelOf(apiVersion, kind) {
  for (const pkg of PACKAGES) {
    const specifier = `${pkg}/${apiVersion}/${kind}`;
    try {
      const module = await import(specifier);
      if (module[kind]) return { Model: module[kind], specifier, type: `I${kind}` };
    } catch (error) {
      if (!['ERR_MODULE_NOT_FOUND', 'ERR_PACKAGE_PATH_NOT_EXPORTED'].includes(error.code))
        throw error;
    }
  }
  return null;
}

const label = (o) => `${o.kind}/${o.metadata?.name}`;

/** Fields the interfaces do not declare, as `kind/name: message` lines (one compiler run). */
function unknownFields(typed) {
  const imports = [
    ...new Set(typed.map((t) => `import type { ${t.type} } from '${t.specifier}';`)),
  ];
  const lines = typed.map(
    (t, i) =>
      `// ${label(t.object)}\nexport const o${i}: ${t.type} = ${JSON.stringify(t.object, null, 1)};`,
  );
  // Inside the repository's node_modules, so the packages resolve as from any source file.
  const cache = join(ROOT, 'node_modules/.cache');
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(join(cache, 'rds-k8s-types-'));
  const file = join(dir, 'manifests.ts');
  try {
    writeFileSync(file, [...imports, ...lines].join('\n'));
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: [],
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
    });
    const source = program.getSourceFile(file);
    return ts.getPreEmitDiagnostics(program, source).map((d) => {
      const text = ts.flattenDiagnosticMessageText(d.messageText, ' ');
      const at = d.start === undefined ? 0 : source.getLineAndCharacterOfPosition(d.start).line;
      const owner = source.text
        .split('\n')
        .slice(0, at + 1)
        .reverse()
        .find((l) => l.startsWith('// '));
      return `${owner?.slice(3) ?? '?'}: ${text}`;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Problems of the given objects, as `kind/name: message` lines; `checked` counts distinct objects. */
export async function schemaErrors(objects) {
  const distinct = [...new Map(objects.map((o) => [JSON.stringify(o), o])).values()];
  const errors = [];
  const typed = [];
  for (const object of distinct) {
    const model = await modelOf(object.apiVersion, object.kind);
    if (model === null) {
      errors.push(`${label(object)}: no model of ${object.apiVersion} ${object.kind}`);
      continue;
    }
    try {
      new model.Model(object).validate();
    } catch (error) {
      errors.push(`${label(object)}: ${error.message}`);
    }
    typed.push({ ...model, object });
  }
  errors.push(...unknownFields(typed));
  return { checked: distinct.length, errors };
}

/**
 * Copies of rendered objects with one mistake each, and the error each must produce: proof that
 * both checks can fail (an unknown field, a missing required field, a wrong type).
 */
export function mistakes(objects) {
  const copy = (kind, name) => {
    const found = objects.find(
      (o) => o.kind === kind && (name === undefined || o.metadata.name === name),
    );
    if (!found) throw new Error(`no ${kind} to make a mistake in`);
    const object = JSON.parse(JSON.stringify(found));
    object.metadata.name = `mistaken-${object.metadata.name}`;
    return object;
  };
  const deployment = copy('Deployment', 'provisioner-worker');
  deployment.spec.replica = 1;
  const scaled = copy('ScaledObject');
  delete scaled.spec.scaleTargetRef;
  const job = copy('Job');
  job.spec.backoffLimit = 'six';
  return [
    { object: deployment, expect: /'"replica"' does not exist/ },
    { object: scaled, expect: /must have required property scaleTargetRef/ },
    { object: job, expect: /backoffLimit must be integer/ },
  ];
}

/** The whole check: every render, plus the mistakes that must be caught. */
export async function checkAll() {
  const major = require('kubernetes-models/package.json').version.split('.')[0];
  if (major !== KUBERNETES_MODELS_MAJOR)
    throw new Error(
      `kubernetes-models ${major}.x: set KUBERNETES_RELEASE to the Kubernetes release of its types`,
    );
  const renders = renderAll();
  const all = renders.flatMap((r) => r.objects);
  const wrong = mistakes(all);
  const { checked, errors } = await schemaErrors([...all, ...wrong.map((m) => m.object)]);
  const missed = wrong
    .filter((m) => !errors.some((e) => e.startsWith(`${label(m.object)}:`) && m.expect.test(e)))
    .map((m) => `${label(m.object)}: not caught (${m.expect})`);
  const real = errors.filter((e) => !wrong.some((m) => e.startsWith(`${label(m.object)}:`)));
  return {
    release: KUBERNETES_RELEASE,
    renders: renders.map((r) => r.name),
    kinds: [...new Set(all.map((o) => o.kind))].sort(),
    checked: checked - wrong.length,
    errors: [...real, ...missed],
  };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await checkAll();
  if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    process.stdout.write(
      `kubernetes ${result.release}: ${result.checked} objects of ${result.renders.length} renders (${result.kinds.join(', ')})\n`,
    );
    for (const error of result.errors) process.stdout.write(`  ${error}\n`);
  }
  process.exit(result.errors.length === 0 ? 0 : 1);
}
