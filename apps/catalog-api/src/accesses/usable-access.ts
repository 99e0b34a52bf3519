/**
 * The one rule of which access is usable now, for everything that answers it: /api/permissions,
 * the GA4GH visas (and through them the provisioner's DRS service), and the access-request
 * webhook. An access is current while it is active and not past its last day (UTC: expiring
 * today still counts); it is usable when it is current and its dataset has an accession and at
 * least one exposure (active or deprecated), the datasets a grant can name.
 * The SQL fragments read `a` (accesses) and `d` (datasets).
 */
const TODAY_UTC = `(now() AT TIME ZONE 'UTC')::date`;

/** The access is current: active and not past its last day. */
export const CURRENT_ACCESS_SQL = `a.status = 'active' AND (a.grant_expires_on IS NULL OR a.grant_expires_on >= ${TODAY_UTC})`;

/** The access has ended: terminated, or active but past its last day. */
export const ENDED_ACCESS_SQL = `a.status = 'terminated' OR (a.status = 'active' AND a.grant_expires_on < ${TODAY_UTC})`;

/** The dataset can be named by a grant: it has an accession and at least one exposure. */
export const GRANTABLE_DATASET_SQL = `d.elu_accession IS NOT NULL
   AND EXISTS (SELECT 1 FROM exposures e WHERE e.dataset_id = d.id)`;

/** The access is usable now: current, on a dataset a grant can name. */
export const USABLE_ACCESS_SQL = `(${CURRENT_ACCESS_SQL}) AND ${GRANTABLE_DATASET_SQL}`;

/** `CURRENT_ACCESS_SQL` for a row in hand (`today`: the UTC day as `YYYY-MM-DD`). */
export function isCurrentAccess(
  row: { status: string; grant_expires_on: string | null },
  today: string,
): boolean {
  return (
    row.status === 'active' && (row.grant_expires_on === null || row.grant_expires_on >= today)
  );
}
