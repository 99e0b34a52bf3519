/**
 * Kubernetes NetworkPolicy semantics, evaluated over rendered manifests: which pods a policy
 * selects, whether a connection from one pod to another pod's port is admitted. Written from the
 * API's documentation (https://kubernetes.io/docs/concepts/services-networking/network-policies/,
 * and the field docs of networking.k8s.io/v1 NetworkPolicySpec):
 * - a pod is isolated for ingress (egress) when any policy of its namespace selects it and has
 *   Ingress (Egress) in its policyTypes (absent: Ingress, plus Egress when it has egress rules);
 * - an isolated pod admits a connection when any rule of any such policy admits it: every one of
 *   the rule's peers is tried (an empty or absent `from`/`to` is every peer), and its ports (an
 *   empty or absent list is every port);
 * - a peer with a podSelector only: pods of the policy's namespace; a namespaceSelector only:
 *   every pod of the namespaces it selects; both: those pods of those namespaces; an ipBlock:
 *   the IPv4 addresses in its CIDR but not in an `except` one. In this model an ipBlock matches
 *   only endpoints outside the cluster (a managed database), which carry an address and match no
 *   pod or namespace selector; in-cluster pods have no address here;
 * - a port is a number (with endPort, a range) or a name, which matches a container port of that
 *   name on the destination pod (for ingress and egress rules alike); protocol TCP by default;
 * - a connection needs the source's egress and the destination's ingress both admitted.
 */

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export interface PolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}

export interface PolicyPort {
  protocol?: string;
  port?: number | string;
  endPort?: number;
}

export interface PolicyRule {
  from?: PolicyPeer[];
  to?: PolicyPeer[];
  ports?: PolicyPort[];
}

export interface NetworkPolicy {
  metadata: { name: string; namespace?: string };
  spec: {
    podSelector: LabelSelector;
    policyTypes?: string[];
    ingress?: PolicyRule[];
    egress?: PolicyRule[];
  };
}

export interface Pod {
  /** What the pod is, for messages (e.g. the workload's name). */
  name: string;
  namespace: string;
  labels: Record<string, string>;
  ports: { name?: string; containerPort: number; protocol?: string }[];
  /** An endpoint outside the cluster: its IPv4 address (no policy of the cluster selects it). */
  address?: string;
}

export interface Namespace {
  name: string;
  labels: Record<string, string>;
}

export function selects(
  selector: LabelSelector | undefined,
  labels: Record<string, string>,
): boolean {
  if (!selector) return true;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {}))
    if (labels[key] !== value) return false;
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, key);
    const ok =
      operator === 'In'
        ? has && values.includes(labels[key])
        : operator === 'NotIn'
          ? !has || !values.includes(labels[key])
          : operator === 'Exists'
            ? has
            : operator === 'DoesNotExist'
              ? !has
              : unknownOperator(operator);
    if (!ok) return false;
  }
  return true;
}

function unknownOperator(operator: string): never {
  throw new Error(`unknown label selector operator ${operator}`);
}

function ipv4(address: string): number {
  const parts = address.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255))
    throw new Error(`not an IPv4 address: ${address}`);
  return parts.reduce((n, p) => n * 256 + p, 0);
}

/** Whether an IPv4 address is in a CIDR block (`10.20.0.0/24`). */
export function inCidr(address: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return Math.floor(ipv4(address) / size) === Math.floor(ipv4(base) / size);
}

function policyTypes(policy: NetworkPolicy): string[] {
  return policy.spec.policyTypes ?? ['Ingress', ...(policy.spec.egress ? ['Egress'] : [])];
}

export class NetworkModel {
  constructor(
    private readonly policies: NetworkPolicy[],
    private readonly namespaces: Namespace[],
  ) {}

  private namespaceLabels(name: string): Record<string, string> {
    return (
      this.namespaces.find((ns) => ns.name === name)?.labels ?? {
        'kubernetes.io/metadata.name': name,
      }
    );
  }

  private policiesOf(pod: Pod, type: 'Ingress' | 'Egress'): NetworkPolicy[] {
    return this.policies.filter(
      (p) =>
        (p.metadata.namespace ?? pod.namespace) === pod.namespace &&
        policyTypes(p).includes(type) &&
        selects(p.spec.podSelector, pod.labels),
    );
  }

  private peerMatches(peer: PolicyPeer, policyNamespace: string, other: Pod): boolean {
    if (peer.ipBlock)
      return (
        other.address !== undefined &&
        inCidr(other.address, peer.ipBlock.cidr) &&
        !(peer.ipBlock.except ?? []).some((block) => inCidr(other.address!, block))
      );
    if (other.address !== undefined) return false;
    if (peer.namespaceSelector) {
      if (!selects(peer.namespaceSelector, this.namespaceLabels(other.namespace))) return false;
    } else if (other.namespace !== policyNamespace) return false;
    return selects(peer.podSelector, other.labels);
  }

  private portMatches(ports: PolicyPort[] | undefined, destination: Pod, port: number): boolean {
    if (!ports || ports.length === 0) return true;
    return ports.some((p) => {
      if ((p.protocol ?? 'TCP') !== 'TCP') return false;
      if (p.port === undefined) return true;
      if (typeof p.port === 'string')
        return destination.ports.some(
          (cp) =>
            cp.name === p.port && cp.containerPort === port && (cp.protocol ?? 'TCP') === 'TCP',
        );
      return p.endPort === undefined ? p.port === port : port >= p.port && port <= p.endPort;
    });
  }

  /**
   * Whether the policies of `pod` of one direction admit `peer`: not isolated, or some rule's
   * peers (all when none are listed) include it on the destination's `port`.
   */
  private side(
    pod: Pod,
    type: 'Ingress' | 'Egress',
    peer: Pod,
    destination: Pod,
    port: number,
  ): { allowed: boolean; policies: string } {
    const policies = this.policiesOf(pod, type);
    const allowed =
      policies.length === 0 ||
      policies.some((p) =>
        ((type === 'Ingress' ? p.spec.ingress : p.spec.egress) ?? []).some((rule) => {
          const peers = type === 'Ingress' ? rule.from : rule.to;
          const namespace = p.metadata.namespace ?? pod.namespace;
          return (
            (!peers ||
              peers.length === 0 ||
              peers.some((x) => this.peerMatches(x, namespace, peer))) &&
            this.portMatches(rule.ports, destination, port)
          );
        }),
      );
    return { allowed, policies: policies.map((p) => p.metadata.name).join(', ') };
  }

  /** Whether `source` may open a TCP connection to `destination`'s `port`, and if not, why. */
  admits(source: Pod, destination: Pod, port: number): { allowed: boolean; reason: string } {
    const egress = this.side(source, 'Egress', destination, destination, port);
    if (!egress.allowed)
      return {
        allowed: false,
        reason: `no egress rule of ${egress.policies} lets ${source.name} reach ${destination.name}:${port}`,
      };
    const ingress = this.side(destination, 'Ingress', source, destination, port);
    if (!ingress.allowed)
      return {
        allowed: false,
        reason: `no ingress rule of ${ingress.policies} admits ${source.name} to ${destination.name}:${port}`,
      };
    return { allowed: true, reason: 'admitted' };
  }
}
