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

const UNITS: Record<string, number> = {
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  K: 1e3,
  M: 1e6,
  G: 1e9,
};

/** The memory limit (bytes) of a manifest's first container: what Kubernetes kills it above. */
export function deployedMemoryLimit(manifest: string): number {
  const deployment = parse(readFileSync(join(__dirname, '../../k8s/base', manifest), 'utf8')) as {
    spec: {
      template: { spec: { containers: { resources: { limits: { memory: string } } }[] } };
    };
  };
  const limit = deployment.spec.template.spec.containers[0].resources.limits.memory;
  const match = /^(\d+)([KMG]i?)?$/.exec(limit);
  if (!match) throw new Error(`${manifest}: unreadable memory limit ${limit}`);
  return Number(match[1]) * (match[2] ? UNITS[match[2]] : 1);
}
