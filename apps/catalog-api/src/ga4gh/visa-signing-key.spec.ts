import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { calculateJwkThumbprint, compactVerify, importJWK } from 'jose';
import { RFC7517_EXAMPLE_RSA_KEY } from '../../test/support/rfc7517-example-key';
import { readVisaKey, signCompact } from './visa-signing-key';

/**
 * REMS's own visa: the token of `test-show` in CSCfi/rems src/clj/rems/jwt.clj, signed by
 * REMS with its test key (test-data/example-private-key.jwk, the RFC 7517 Appendix A.2 key).
 */
const REMS_VISA =
  'eyJhbGciOiJSUzI1NiIsImprdSI6Imh0dHA6Ly9sb2NhbGhvc3Q6MzAwMC9hcGkvandrIiwidHlwIjoiSldUIiwia2lkIjoiMjAxMS0wNC0yOSJ9.' +
  'eyJpc3MiOiJodHRwOi8vbG9jYWxob3N0OjMwMDAvIiwic3ViIjoiZWxpeGlyLXVzZXIiLCJpYXQiOjI1MjQ2MDgwMDAsImV4cCI6MjU1NjE0NDAwMCwiZ2E0Z2hfdmlzYV92MSI6eyJ0eXBlIjoiQ29udHJvbGxlZEFjY2Vzc0dyYW50cyIsInZhbHVlIjoiRUdBRDAwMDAxMDA2NjczIiwic291cmNlIjoiRUdBQzAwMDAxMDAwOTA4IiwiYnkiOiJkYWMiLCJhc3NlcnRlZCI6MTAzNDI5NDQwMH19.' +
  'LnfsNxVfM_NfuxYYQtZexp975Hc3hrCxTG0fhMrgTakSLXa6gASc5MPn14seqsTjuyhtmUnu7WrCEVxko8WRvJybGDWmdbrycYafNg4amevtbs7hTPCkqAXD1DcuP53LDeLhSl_YrNgfz4aDE0uaw37I8TAsqdAeDALcZqQ6SIwF5wBG_wRWtKTPmDp-GTpzy9STx-nrIqw3SYeftunlI4wDs5avaktDuOpgMl8TVUGodGFjJsZjN8UOhKgSsGdXDGmu4FeeIjJt9Sa_dsCQPZQ1GpHyg1lFa63FZPPOy2-F9TNZcHJR1vFxKLD9U8Lvr11-EFjIiGuDg6miiWyodw';

/** The header and claims REMS signed there, members in REMS's order. */
const REMS_HEADER = {
  alg: 'RS256',
  jku: 'http://localhost:3000/api/jwk',
  typ: 'JWT',
  kid: '2011-04-29',
};
const REMS_CLAIMS = {
  iss: 'http://localhost:3000/',
  sub: 'elixir-user',
  iat: 2524608000,
  exp: 2556144000,
  ga4gh_visa_v1: {
    type: 'ControlledAccessGrants',
    value: 'EGAD00001006673',
    source: 'EGAC00001000908',
    by: 'dac',
    asserted: 1034294400,
  },
};

const rfcKeyText = JSON.stringify(RFC7517_EXAMPLE_RSA_KEY);

describe('visa signing key', () => {
  it("reproduces REMS's test visa byte for byte with the RFC 7517 example key (golden vector)", () => {
    const key = readVisaKey(rfcKeyText, 'RS256', 'rfc');
    expect(key.kid).toBe('2011-04-29');
    expect(key.privateKey).toBeDefined();
    expect(signCompact(REMS_HEADER, REMS_CLAIMS, key.privateKey!, 'RS256')).toBe(REMS_VISA);
  });

  it('publishes only the public members, with kid, alg and use', () => {
    const { publicJwk } = readVisaKey(rfcKeyText, 'RS256', 'rfc');
    expect(publicJwk).toEqual({
      kty: 'RSA',
      n: RFC7517_EXAMPLE_RSA_KEY.n,
      e: 'AQAB',
      kid: '2011-04-29',
      alg: 'RS256',
      use: 'sig',
    });
  });

  it('names a key without kid by its RFC 7638 thumbprint, the same from a JWK or a PEM', async () => {
    const { kid: _kid, alg: _alg, ...bare } = RFC7517_EXAMPLE_RSA_KEY;
    const fromJwk = readVisaKey(JSON.stringify(bare), 'RS256', 'jwk');
    // RFC 7638 section 3.1 computes this thumbprint for this very modulus.
    expect(fromJwk.kid).toBe('NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
    expect(fromJwk.kid).toBe(await calculateJwkThumbprint({ kty: 'RSA', n: bare.n, e: bare.e }));
    const pem = createPrivateKey({ key: bare, format: 'jwk' });
    for (const type of ['pkcs1', 'pkcs8'] as const) {
      const fromPem = readVisaKey(pem.export({ type, format: 'pem' }) as string, 'RS256', type);
      expect(fromPem.publicJwk).toEqual(fromJwk.publicJwk);
    }
  });

  it('reads a public key (the next key of a rotation) as JWK or SPKI PEM, without a private part', () => {
    const {
      d: _d,
      p: _p,
      q: _q,
      dp: _dp,
      dq: _dq,
      qi: _qi,
      ...publicOnly
    } = RFC7517_EXAMPLE_RSA_KEY;
    const fromJwk = readVisaKey(JSON.stringify(publicOnly), 'RS256', 'next');
    expect(fromJwk.privateKey).toBeUndefined();
    expect(fromJwk.publicJwk).toEqual(readVisaKey(rfcKeyText, 'RS256', 'rfc').publicJwk);
    const spki = createPublicKey({ key: publicOnly, format: 'jwk' }).export({
      type: 'spki',
      format: 'pem',
    }) as string;
    const fromPem = readVisaKey(spki, 'RS256', 'next');
    expect(fromPem.privateKey).toBeUndefined();
    expect(fromPem.kid).toBe('NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
  });

  it('signs ES256 with a P-256 key, verifiable with the published key', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const key = readVisaKey(
      privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
      'ES256',
      'ec',
    );
    const header = { alg: 'ES256', typ: 'JWT', kid: key.kid };
    const jws = signCompact(header, { sub: 'x' }, key.privateKey!, 'ES256');
    const verified = await compactVerify(jws, await importJWK(key.publicJwk, 'ES256'));
    expect(JSON.parse(Buffer.from(verified.payload).toString())).toEqual({ sub: 'x' });
  });

  it.each([
    ['an RSA key under 2048 bits for RS256', 'RS256', 'rsa-1024', /at least 2048 bits/],
    ['an RSA key for ES256', 'ES256', 'rsa-2048', /P-256/],
    ['a P-384 key for ES256', 'ES256', 'p-384', /P-256/],
    ['an EC key for RS256', 'RS256', 'p-256', /RSA key/],
    ['text that is no key', 'RS256', 'garbage', /not a PEM or JWK key/],
  ] as const)('refuses %s, naming where it came from', (_what, alg, kind, message) => {
    const text = keyText(kind);
    expect(() => readVisaKey(text, alg, 'GA4GH_VISA_KEY_FILE (/k)')).toThrow(message);
    expect(() => readVisaKey(text, alg, 'GA4GH_VISA_KEY_FILE (/k)')).toThrow(/GA4GH_VISA_KEY_FILE/);
  });
});

function keyText(kind: 'rsa-1024' | 'rsa-2048' | 'p-256' | 'p-384' | 'garbage'): string {
  const pem = (key: { export(o: object): string | Buffer }) =>
    key.export({ type: 'pkcs8', format: 'pem' }) as string;
  switch (kind) {
    case 'rsa-1024':
      return pem(generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey);
    case 'rsa-2048':
      return pem(createPrivateKey({ key: RFC7517_EXAMPLE_RSA_KEY, format: 'jwk' }));
    case 'p-256':
      return pem(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
    case 'p-384':
      return pem(generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey);
    case 'garbage':
      return '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n';
  }
}
