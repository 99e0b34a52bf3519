import type { Principal } from '@app/auth';
import { ForbiddenError } from '@app/errors';

/** Who is reading the catalog, reduced to what visibility depends on. */
export type Viewer =
  { kind: 'global' } | { kind: 'user'; userId: number } | { kind: 'endpoint'; endpointId: number };

export function viewerOf(principal: Principal | undefined): Viewer {
  if (principal?.kind === 'global') return { kind: 'global' };
  if (principal?.kind === 'user' && typeof principal.id === 'number') {
    return { kind: 'user', userId: principal.id };
  }
  if (principal?.kind === 'endpoint' && typeof principal.id === 'number') {
    return { kind: 'endpoint', endpointId: principal.id };
  }
  // The guard only lets the three key kinds through; anything else is a wiring mistake.
  throw new ForbiddenError('This credential cannot read the catalog');
}

/** Stable identity for cache keys: one caller never sees another's cached view. */
export function viewerIdentity(principal: Principal | undefined): string {
  if (principal === undefined) return 'anonymous';
  return `${principal.kind}:${principal.id ?? ''}`;
}
