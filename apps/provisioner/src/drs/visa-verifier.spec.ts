import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { VisaVerifier } from './visa-verifier';

const ISSUER = 'https://catalog.example.org';
const NOW = Math.floor(Date.now() / 1000);

/** Each rule of the verifier on its own: a JWKS served here, visas signed here. */
describe('VisaVerifier', () => {
  let server: Server;
  let jku: string;
  let key: CryptoKey;
  let other: CryptoKey;
  let verifier: VisaVerifier;

  const visa = async (
    change: (claims: Record<string, unknown>, header: Record<string, unknown>) => void = () =>
      undefined,
    signWith: CryptoKey = key,
  ) => {
    const claims: Record<string, unknown> = {
      iss: ISSUER,
      sub: 'sub-1',
      iat: NOW - 10,
      exp: NOW + 3600,
      ga4gh_visa_v1: {
        type: 'ControlledAccessGrants',
        value: 'ACC-1',
        source: ISSUER,
        by: 'dac',
        asserted: NOW - 60,
      },
    };
    const header: Record<string, unknown> = { alg: 'ES256', typ: 'JWT', kid: 'k1', jku };
    change(claims, header);
    return new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(signWith);
  };

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    key = pair.privateKey;
    ({ privateKey: other } = await generateKeyPair('ES256'));
    const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    jku = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/jwk`;
    verifier = new VisaVerifier(ISSUER, jku, 2000);
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('a valid visa: its subject, accession, expiry and signing time', async () => {
    expect(await verifier.verify(await visa())).toEqual({
      sub: 'sub-1',
      value: 'ACC-1',
      exp: NOW + 3600,
      iat: NOW - 10,
    });
  });

  it('a forged visa (claims changed after signing): signature', async () => {
    const [header, , signature] = (await visa()).split('.');
    const claims = Buffer.from(
      JSON.stringify({
        iss: ISSUER,
        sub: 'sub-1',
        exp: NOW + 3600,
        ga4gh_visa_v1: {
          type: 'ControlledAccessGrants',
          value: 'ACC-2',
          source: ISSUER,
          by: 'dac',
          asserted: NOW,
        },
      }),
    ).toString('base64url');
    expect(await verifier.verify(`${header}.${claims}.${signature}`)).toBe('signature');
  });

  it('signed by another key under the trusted kid: signature', async () => {
    expect(await verifier.verify(await visa(undefined, other))).toBe('signature');
  });

  it('expired, and not yet valid', async () => {
    expect(await verifier.verify(await visa((c) => (c.exp = NOW - 1)))).toBe('expired');
    expect(await verifier.verify(await visa((c) => (c.iat = NOW + 3600)))).toBe('not yet valid');
  });

  it('a foreign visa: another issuer, another jku (never fetched)', async () => {
    expect(await verifier.verify(await visa((c) => (c.iss = 'https://elsewhere.example')))).toBe(
      'wrong issuer',
    );
    expect(
      await verifier.verify(await visa((_c, h) => (h.jku = 'https://elsewhere.example/jwk'))),
    ).toBe('untrusted jku');
  });

  it('not a ControlledAccessGrants visa, or one with conditions', async () => {
    const grant = (change: (g: Record<string, unknown>) => void) =>
      visa((c) => change(c.ga4gh_visa_v1 as Record<string, unknown>));
    expect(await verifier.verify(await grant((g) => (g.type = 'AffiliationAndRole')))).toBe(
      'not a ControlledAccessGrants visa',
    );
    expect(await verifier.verify(await grant((g) => (g.value = '')))).toBe(
      'not a ControlledAccessGrants visa',
    );
    expect(await verifier.verify(await grant((g) => (g.conditions = [[]])))).toBe('conditions');
    expect(await verifier.verify('not.a.jwt')).toBe('unparsable');
  });
});
