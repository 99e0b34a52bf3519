import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..');

interface SchemaCheck {
  release: string;
  renders: string[];
  kinds: string[];
  checked: number;
  errors: string[];
}

/**
 * Every object of every overlay, environment (k8s/data) and optional component, checked offline
 * against Kubernetes' and the custom resources' API types (test/deploy/k8s-schemas.mjs: the
 * models are ES modules, so the check runs in a node process of its own). It plants an unknown
 * field, a missing required field and a wrong type, and fails unless each is reported.
 */
it('validates every rendered manifest against the API types of Kubernetes and of the CRDs', async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(ROOT, 'test/deploy/k8s-schemas.mjs'), '--json'],
    { cwd: ROOT, maxBuffer: 16 << 20 },
  ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  const result = JSON.parse(stdout) as SchemaCheck;
  expect(result.errors).toEqual([]);
  expect(result.release).toBe('1.36');
  expect(result.renders).toEqual(
    expect.arrayContaining([
      'overlays/dev',
      'overlays/prod',
      'overlays/prod-s3',
      'data/dev',
      'data/prod',
      'data/prod-s3',
      'overlays/prod + components/gateway-api',
      'overlays/prod + components/keda',
      'overlays/prod + components/prometheus-operator',
      'overlays/prod + components/drs-offload',
      'overlays/prod + components/postgres-queue',
      'examples/site',
    ]),
  );
  expect(result.kinds).toEqual(
    expect.arrayContaining([
      'Deployment',
      'Job',
      'StatefulSet',
      'Namespace',
      'PersistentVolumeClaim',
      'HTTPRoute',
      'Gateway',
      'ServiceMonitor',
      'PrometheusRule',
      'ScaledObject',
    ]),
  );
  // One node process: about 5 s of CPU for 13 renders, 30-60 s on the loaded 2-core machine
  // beside other suites.
}, 120_000);
