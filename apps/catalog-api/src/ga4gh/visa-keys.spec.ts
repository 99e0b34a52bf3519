import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '@app/errors';
import { loadCatalogSettings } from '../config/catalog.settings';
import { VisaKeys } from './visa-keys';

describe('VisaKeys (the key files read at start)', () => {
  let dir: string;
  let rsa: string;
  let ec: string;
  let publicOnly: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'visa-keys-'));
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    rsa = join(dir, 'rsa.pem');
    writeFileSync(rsa, pair.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    publicOnly = join(dir, 'rsa.pub.pem');
    writeFileSync(publicOnly, pair.publicKey.export({ type: 'spki', format: 'pem' }));
    ec = join(dir, 'ec.pem');
    writeFileSync(
      ec,
      generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
        type: 'pkcs8',
        format: 'pem',
      }),
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const keys = (env: Record<string, string>) =>
    new VisaKeys(loadCatalogSettings({ DATABASE_URL: 'postgres://x/y', ...env }));

  it('is off without a key file: both routes answer 503', () => {
    const off = keys({});
    expect(off.enabled).toBe(false);
    expect(() => off.issuer()).toThrow(AppError);
    expect(() => off.configuredJwks()).toThrow(/GA4GH_VISA_KEY_FILE/);
  });

  it('takes iss, jku and source from CATALOG_SOURCE, source overridable', () => {
    const on = keys({ GA4GH_VISA_KEY_FILE: rsa, CATALOG_SOURCE: 'https://catalog.example/' });
    expect(on.issuer()).toMatchObject({
      issuer: 'https://catalog.example',
      jku: 'https://catalog.example/api/jwk',
      source: 'https://catalog.example',
      defaultLifetimeDays: 30,
    });
    const institute = keys({
      GA4GH_VISA_KEY_FILE: rsa,
      CATALOG_SOURCE: 'https://catalog.example',
      GA4GH_VISA_SOURCE: 'https://institute.example/',
    });
    expect(institute.issuer().source).toBe('https://institute.example');
  });

  it('signs ES256 when asked and given a P-256 key', () => {
    const on = keys({
      GA4GH_VISA_KEY_FILE: ec,
      GA4GH_VISA_ALGORITHM: 'ES256',
      CATALOG_SOURCE: 'https://catalog.example',
    });
    expect(on.issuer().key.publicJwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256' });
  });

  it.each([
    [{ GA4GH_VISA_KEY_FILE: 'rsa' }, /needs CATALOG_SOURCE/],
    [{ GA4GH_VISA_KEY_FILE: 'ec', CATALOG_SOURCE: 'https://c.example' }, /RS256 needs an RSA key/],
    [{ GA4GH_VISA_KEY_FILE: 'public', CATALOG_SOURCE: 'https://c.example' }, /must be private/],
    [{ GA4GH_VISA_KEY_FILE: 'missing', CATALOG_SOURCE: 'https://c.example' }, /cannot read/],
    [{ GA4GH_VISA_NEXT_KEY_FILE: 'ec' }, /GA4GH_VISA_NEXT_KEY_FILE .*RSA key/],
  ])('refuses to start with %j', (env, message) => {
    const files: Record<string, string> = {
      rsa,
      ec,
      public: publicOnly,
      missing: join(dir, 'missing.pem'),
    };
    const resolved = Object.fromEntries(
      Object.entries(env).map(([name, value]) => [name, files[value] ?? value]),
    );
    expect(() => keys(resolved)).toThrow(message);
  });
});
