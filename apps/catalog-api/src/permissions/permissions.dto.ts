import { PathTextParam } from '@app/platform';

export class PermissionParams {
  @PathTextParam("The person's identity-provider subject", 64)
  user_oidc_id!: string;
}
