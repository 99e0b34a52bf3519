/**
 * The `ga4gh_visa_v1` claim of a GA4GH Passport v1.2 `ControlledAccessGrants` visa (AAI 1.2,
 * "Visa Format"): `value` names what may be used (a dataset accession), `source` who granted it,
 * `by` which role, `asserted` when (epoch seconds). One shape for both sides: the catalog builds
 * visas of it, DRS checks a visa against it.
 */
export interface ControlledAccessGrant {
  type: 'ControlledAccessGrants';
  value: string;
  source: string;
  by: string;
  asserted: number;
  /** Conditions a verifier must evaluate; one that cannot must refuse the visa. */
  conditions?: unknown;
}

/** Whether a `ga4gh_visa_v1` claim is a ControlledAccessGrants visa with every member set. */
export function isControlledAccessGrant(claim: unknown): claim is ControlledAccessGrant {
  if (claim === null || typeof claim !== 'object') return false;
  const visa = claim as Record<string, unknown>;
  return (
    visa.type === 'ControlledAccessGrants' &&
    typeof visa.value === 'string' &&
    visa.value !== '' &&
    typeof visa.source === 'string' &&
    typeof visa.asserted === 'number'
  );
}
