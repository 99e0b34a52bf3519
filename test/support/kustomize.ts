import { execFileSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';

/** A rendered Kubernetes object, as far as the manifest tests read it. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

/** A kustomization as the real `kubectl kustomize` renders it (kubectl missing fails the test). */
export function renderKustomization(dir: string): K8sObject[] {
  const text = execFileSync('kubectl', ['kustomize', dir], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 16 << 20,
  });
  return parseAllDocuments(text).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${dir}: ${doc.errors[0].message}`);
    return doc.toJS() as K8sObject;
  });
}
