import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');

describe('k8s/components/drs-offload', () => {
  // kustomize reads only files below a component's folder, so the component carries a copy of
  // the template the tests and the bench run nginx with: a drift would ship an untested server.
  it('carries the very nginx template that the tests run', () => {
    expect(
      readFileSync(join(ROOT, 'k8s/components/drs-offload/drs-offload.conf.template'), 'utf8'),
    ).toBe(readFileSync(join(ROOT, 'deploy/nginx/drs-offload.conf.template'), 'utf8'));
  });
});
