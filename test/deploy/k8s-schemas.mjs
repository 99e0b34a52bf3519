// What `podman kube play` cannot run (HorizontalPodAutoscaler, PodDisruptionBudget,
// NetworkPolicy, Ingress) is checked offline against the API types of the Kubernetes release the
// docs name (1.30: `kubernetes-types@1.30.0`, generated from that release's OpenAPI document):
// every rendered object becomes an object literal typed with its kind, and the TypeScript
// compiler reports unknown fields, missing required ones and wrong types.
// Decision: docs/decisions/kubernetes-schemas-offline.md.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ROOT } from '../../scripts/deploy/podman-stack.mjs';

const require = createRequire(import.meta.url);
const ts = require('typescript');

export const KUBERNETES_VERSION = require('kubernetes-types/package.json').version;

/** kind -> [apiVersion, module, type] */
const TYPES = {
  HorizontalPodAutoscaler: [
    'autoscaling/v2',
    'kubernetes-types/autoscaling/v2',
    'HorizontalPodAutoscaler',
  ],
  PodDisruptionBudget: ['policy/v1', 'kubernetes-types/policy/v1', 'PodDisruptionBudget'],
  NetworkPolicy: ['networking.k8s.io/v1', 'kubernetes-types/networking/v1', 'NetworkPolicy'],
  Ingress: ['networking.k8s.io/v1', 'kubernetes-types/networking/v1', 'Ingress'],
};

export function renderOverlay(overlay) {
  const text = execFileSync('kubectl', ['kustomize', join(ROOT, 'k8s/overlays', overlay)], {
    encoding: 'utf8',
  });
  return parseAllDocuments(text).map((doc) => doc.toJS());
}

/** Type errors of the given objects (only the kinds above), as `kind/name: message` lines. */
export function typeErrors(objects) {
  const checked = objects.filter((o) => TYPES[o.kind]);
  const imports = [
    ...new Set(
      checked.map((o) => `import type { ${TYPES[o.kind][2]} } from '${TYPES[o.kind][1]}';`),
    ),
  ];
  const lines = checked.map(
    (o, i) =>
      `// ${o.kind}/${o.metadata?.name}\nexport const o${i}: ${TYPES[o.kind][2]} = ${JSON.stringify(o, null, 1)};`,
  );
  // Inside the repository's node_modules, so `kubernetes-types` resolves as from any source file.
  const cache = join(ROOT, 'node_modules/.cache');
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(join(cache, 'rds-k8s-types-'));
  const file = join(dir, 'manifests.ts');
  try {
    writeFileSync(file, [...imports, ...lines].join('\n'));
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      types: [],
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
    });
    const source = program.getSourceFile(file);
    const errors = ts.getPreEmitDiagnostics(program, source).map((d) => {
      const text = ts.flattenDiagnosticMessageText(d.messageText, ' ');
      const at = d.start === undefined ? 0 : source.getLineAndCharacterOfPosition(d.start).line;
      const owner = source.text
        .split('\n')
        .slice(0, at + 1)
        .reverse()
        .find((l) => l.startsWith('// '));
      return `${owner?.slice(3) ?? '?'}: ${text}`;
    });
    return { checked: checked.length, errors };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
