import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * The environment the image gives every process (the runtime stage's `ENV` in the Dockerfile:
 * the allocator's tunables), so a process measured outside the image runs as deployed.
 */
export function imageEnv(): Record<string, string> {
  const dockerfile = readFileSync(join(__dirname, '../../Dockerfile'), 'utf8');
  const runtime = dockerfile.slice(dockerfile.indexOf(' AS runtime'));
  // The first ENV instruction of that stage, its continued lines joined.
  const instruction = /^ENV\s+((?:.*\\\n)*.*)$/m.exec(runtime)?.[1];
  if (!instruction) throw new Error('Dockerfile: no ENV in the runtime stage');
  const env: Record<string, string> = {};
  for (const pair of instruction.replace(/\\\n/g, ' ').trim().split(/\s+/)) {
    const at = pair.indexOf('=');
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return { GLIBC_TUNABLES: env.GLIBC_TUNABLES };
}

/** What is read here of a Deployment's first container. */
interface Container {
  command: string[];
  resources: { limits: { memory: string } };
  livenessProbe?: { timeoutSeconds?: number };
}

/** The first container of `manifest` under k8s/base. */
function firstContainer(manifest: string): Container {
  const deployment = parse(readFileSync(join(__dirname, '../../k8s/base', manifest), 'utf8')) as {
    spec: { template: { spec: { containers: Container[] } } };
  };
  return deployment.spec.template.spec.containers[0];
}

/**
 * The flags node runs a process with in Kubernetes (`manifest` under k8s/base, its first
 * container's `command: [node, …flags, script]`), so a test or benchmark that measures the
 * process runs it exactly as deployed (the catalog's heap cap, the worker's semi-space).
 */
export function deployedNodeArgs(manifest: string): string[] {
  return firstContainer(manifest).command.slice(1, -1);
}

/**
 * How long (ms) the kubelet waits for one liveness answer before it counts the probe failed
 * (`timeoutSeconds`, 1 s when unset): what a test holds the process's health answers to.
 */
export function deployedLivenessTimeoutMs(manifest: string): number {
  return (firstContainer(manifest).livenessProbe?.timeoutSeconds ?? 1) * 1000;
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
  const limit = firstContainer(manifest).resources.limits.memory;
  const match = /^(\d+)([KMG]i?)?$/.exec(limit);
  if (!match) throw new Error(`${manifest}: unreadable memory limit ${limit}`);
  return Number(match[1]) * (match[2] ? UNITS[match[2]] : 1);
}
