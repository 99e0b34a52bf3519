/** What the shared store answers when a failed authentication is recorded. */
export interface FailureCount {
  /** Failures of this client in the current window, this one included. */
  failures: number;
  /** How much longer the client is blocked; 0 = not blocked. */
  blockedForMs: number;
}

/** The limits a store applies when it counts a failure. */
export interface FailurePolicy {
  /** Failures allowed per window; the next one blocks the client. */
  maxFailures: number;
  windowMs: number;
  blockMs: number;
}

/**
 * Where failed authentications are counted, shared by every replica of a service (PostgreSQL
 * or Redis), so a guesser cannot multiply its allowance by the number of replicas.
 */
export interface AuthFailureStore {
  recordFailure(client: string, policy: FailurePolicy): Promise<FailureCount>;
}

export const AUTH_FAILURE_STORE = Symbol('AUTH_FAILURE_STORE');
