import { decodeJwt } from 'jose';
import type { CatalogVisasClient } from './catalog-visas.client';
import { DrsAuthorizer } from './drs-authorizer';
import type { VisaVerifier } from './visa-verifier';

/** An unsigned JWT (the verifier below stands in for the signature check). */
const jwt = (claims: object) =>
  ['{"alg":"none"}', JSON.stringify(claims), '']
    .map((part) => Buffer.from(part).toString('base64url'))
    .join('.');
const visa = (value: string, iat: number) =>
  jwt({ sub: 'rita', iat, exp: iat + 3600, ga4gh_visa_v1: { value } });
const passport = (...visas: string[]) => jwt({ sub: 'rita', ga4gh_passport_v1: visas });

describe('DrsAuthorizer: a new grant is as prompt as a revocation', () => {
  const verifier = {
    verify: (jws: string) => {
      const c = decodeJwt(jws) as {
        sub: string;
        exp: number;
        iat: number;
        ga4gh_visa_v1: { value: string };
      };
      return Promise.resolve({ sub: c.sub, value: c.ga4gh_visa_v1.value, exp: c.exp, iat: c.iat });
    },
  } as unknown as VisaVerifier;

  function authorizer(catalogVisas: () => string[]) {
    const asked: number[] = [];
    const catalog = {
      visasOf: () => {
        asked.push(Date.now());
        return Promise.resolve(catalogVisas());
      },
    } as unknown as CatalogVisasClient;
    const drs = new DrsAuthorizer(verifier, catalog, { maxVisas: 10, grantCheckSeconds: 60 });
    return { drs, asked };
  }

  it('asks the catalog again for a visa signed after the remembered answer, once', async () => {
    const now = Math.floor(Date.now() / 1000);
    const old = visa('ELU_1', now - 600);
    let current = [old];
    const { drs, asked } = authorizer(() => current);
    const first = await drs.authorize({ passports: [passport(old)] });
    expect([...first.accessions]).toEqual(['ELU_1']);
    // A grant made now: its visa is newer than the remembered answer.
    const granted = visa('ELU_2', now + 1);
    current = [old, granted];
    const second = await drs.authorize({ passports: [passport(old, granted)] });
    expect([...second.accessions].sort()).toEqual(['ELU_1', 'ELU_2']);
    expect(asked).toHaveLength(2);
    // Confirmed: the remembered answer serves from now on.
    await drs.authorize({ passports: [passport(old, granted)] });
    expect(asked).toHaveLength(2);
  });

  it('never asks again for an older visa the catalog no longer signs (a revoked grant)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const kept = visa('ELU_1', now - 600);
    const revoked = visa('ELU_3', now - 600);
    const { drs, asked } = authorizer(() => [kept]);
    for (let i = 0; i < 3; i++) {
      const caller = await drs.authorize({ passports: [passport(kept, revoked)] });
      expect([...caller.accessions]).toEqual(['ELU_1']);
    }
    expect(asked).toHaveLength(1);
  });
});
