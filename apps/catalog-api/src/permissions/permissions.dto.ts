import { BooleanParam, PathTextParam } from '@app/platform';

export class PermissionParams {
  @PathTextParam("The person's identity-provider subject", 64)
  user_oidc_id!: string;
}

export class PermissionQuery {
  @BooleanParam(
    "Global key only: answer why each of the person's accesses is listed or not " +
      '(`{subject, accessions, not_listed}`) instead of the list; default false',
  )
  explain?: boolean;
}

/** Why an access is not in a person's permissions (nor in their visas). */
export type NotListedReason = 'terminated' | 'expired' | 'no_accession' | 'not_exposed';

export interface PermissionsExplained {
  subject: string;
  accessions: string[];
  not_listed: { accession: string | null; title: string; reason: NotListedReason }[];
}
