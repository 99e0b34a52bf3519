import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * The flags node runs a process with in Kubernetes (`manifest` under k8s/base, its first
 * container's `command: [node, …flags, script]`), so a test or benchmark that measures the
 * process runs it exactly as deployed (the catalog's heap cap, the worker's semi-space).
 */
export function deployedNodeArgs(manifest: string): string[] {
  const deployment = parse(readFileSync(join(__dirname, '../../k8s/base', manifest), 'utf8')) as {
    spec: { template: { spec: { containers: { command: string[] }[] } } };
  };
  return deployment.spec.template.spec.containers[0].command.slice(1, -1);
}
