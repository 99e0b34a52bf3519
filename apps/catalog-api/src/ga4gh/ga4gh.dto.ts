import { ApiProperty } from '@nestjs/swagger';
import { BooleanParam, PathTextParam } from '@app/platform';

export class VisaPermissionParams {
  @PathTextParam("The person's identity-provider subject (the visas' `sub`)", 64)
  user_oidc_id!: string;
}

export class VisaPermissionQuery {
  @BooleanParam(
    'Also ended accesses (terminated, or past their last day), their visas already expired ' +
      '(REMS `expired`); default false',
  )
  expired?: boolean;

  @BooleanParam(
    "Global key only: answer why each of the person's accesses has a visa or not " +
      '(`{subject, accessions, not_listed}`, as /api/permissions) instead of the passport; ' +
      'default false',
  )
  explain?: boolean;
}

export class PassportBody {
  @ApiProperty({
    description:
      'One compact JWS (RS256 by default) per access: a GA4GH Passport v1.2 ' +
      '`ControlledAccessGrants` visa, verifiable with the keys of `jku` (GET /api/jwk)',
    type: [String],
    example: ['eyJhbGciOiJSUzI1NiIsImprdSI6Imh0dHBzOi8v...'],
  })
  ga4gh_passport_v1!: string[];
}

export class JwkSetBody {
  @ApiProperty({
    description:
      'RFC 7517 JWK Set: the signing key, the next one during a rotation, and retired keys ' +
      'until the last visa each signed has expired',
    type: 'array',
    items: { type: 'object', additionalProperties: { type: 'string' } },
    example: [{ kty: 'RSA', n: '0vx7agoebGc...', e: 'AQAB', kid: '2011-04-29', alg: 'RS256' }],
  })
  keys!: Record<string, string>[];
}
