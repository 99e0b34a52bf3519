/**
 * The JWS algorithms a token signed with a key from a JWKS may use: asymmetric only, so a public
 * key can never be used as an HMAC secret (RFC 8725 §3.1).
 */
export const ASYMMETRIC_JWS_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];
