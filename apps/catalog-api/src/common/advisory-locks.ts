/**
 * Postgres advisory-lock keys of the catalog, in one place so two features never share one by
 * accident. The migration runner (731_104_001) and the test template (731_104_900) keep theirs.
 */
export const ADVISORY_LOCKS = {
  /** Held for a whole catalog import: two imports of one document never interleave. */
  catalogImport: 731_104_010,
  /** Namespace of the two-key (namespace, hashtext(subject)) locks on one person's subject. */
  personSubject: 731_104_101,
  /** Held for a whole identity-provider sync: one at a time across replicas. */
  idpSync: 731_104_102,
  /** Held while expired accesses are terminated. */
  accessExpiry: 731_104_103,
  /**
   * Held while an endpoint is created: names are unique whatever their case, which the table's
   * constraint (case-sensitive) cannot say, so the check and the insert must not interleave.
   */
  endpointNames: 731_104_104,
} as const;
