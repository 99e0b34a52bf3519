/**
 * The parts of Keycloak's JSON this catalog reads, as Keycloak sends them: the admin API's
 * UserRepresentation and the OpenID Connect token response. Every field is optional on the wire
 * except the user id, so readers check what they use.
 */
export interface KeycloakUser {
  id: string;
  username?: string;
  firstName?: string | null;
  lastName?: string | null;
  email?: string | null;
  emailVerified?: boolean;
  enabled?: boolean;
  createdTimestamp?: number;
}

export interface KeycloakTokenResponse {
  access_token: string;
  expires_in: number;
  token_type: string;
  refresh_expires_in?: number;
  scope?: string;
  'not-before-policy'?: number;
}

export function isKeycloakUser(value: unknown): value is KeycloakUser {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { id?: unknown }).id === 'string' &&
    (value as { id: string }).id.length > 0
  );
}

export function isTokenResponse(value: unknown): value is KeycloakTokenResponse {
  const v = value as Partial<KeycloakTokenResponse> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.access_token === 'string' &&
    typeof v.expires_in === 'number' &&
    Number.isFinite(v.expires_in)
  );
}
