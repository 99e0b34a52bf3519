import request from 'supertest';
import { generateKeyPairSync, createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { hashApiKey } from '@app/auth';
import { CatalogTestApp, TEST_GLOBAL_KEY } from '../../../test/support/catalog-app';
import { freePort } from '../../../test/support/app-process';
import { APP_START_MS } from '../../../test/support/timeouts';
import { AccessExpiryService } from '../src/accesses/access-expiry.service';
import { readVisaKey, signCompact } from '../src/ga4gh/visa-signing-key';
import { VisasRepository } from '../src/ga4gh/visas.repository';
import { FakeKeycloak } from './support/fake-keycloak';
import { FakeRems } from './support/fake-rems';
import { addDataset, addUser, startIntegrationApp, utcDay } from './support/integration-fixture';
import { PassportBroker } from './support/passport-broker';

// Several apps start on one database, one after another, on a busy machine.
jest.setTimeout(30_000);

const BROKER_KEY = 'visa-broker-key-0123456789abcdef0123456789';
const USER_KEY = 'visa-test-user-key-0123456789abcdef';
const ENDPOINT_KEY = 'v'.repeat(64);
const APPLICATION = 5150;

/** An RSA key made for this run, as the PEM file a Kubernetes Secret would mount. */
function keyFile(dir: string, name: string, type: 'rsa' | 'ec' = 'rsa'): string {
  const { privateKey } =
    type === 'rsa'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const path = join(dir, name);
  writeFileSync(path, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  return path;
}

/** `YYYY-MM-DD` as epoch seconds at UTC midnight. */
const midnight = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000;

describe('GA4GH passport visas (GET /api/ga4gh/permissions, GET /api/jwk)', () => {
  let dir: string;
  let kc: FakeKeycloak;
  let t: CatalogTestApp;
  let base: string;
  let broker: PassportBroker;
  let rems: FakeRems;
  let dataset: string;
  let other: string;
  let firstKey: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'visa-keys-'));
    firstKey = keyFile(dir, 'visa-key.pem');
    kc = await new FakeKeycloak().start();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startIntegrationApp({
      CATALOG_SOURCE: base,
      GA4GH_VISA_KEY_FILE: firstKey,
      GA4GH_BROKER_API_KEY_SHA256: createHash('sha256').update(BROKER_KEY).digest('hex'),
      ACCESSREQ_INTEGRATION_ENABLED: 'true',
      ACCESSREQ_ALLOWED_IP_ADDRESSES: '127.0.0.1',
      IDP_URL: kc.url,
      IDP_REALM: kc.realm,
      IDP_CLIENT_ID: kc.clientId,
      IDP_CLIENT_SECRET: kc.clientSecret,
      IDP_TIMEOUT_MS: '1000',
    });
    await t.app.listen(port, '127.0.0.1');
    rems = new FakeRems({ add: `${base}/api/accessreq`, remove: `${base}/api/accessreq/revoke` });
    broker = new PassportBroker({ [`${base}/api/jwk`]: 'catalog' });
    dataset = await addDataset(t.dataSource, 'Visa dataset');
    other = await addDataset(t.dataSource, 'Second visa dataset');
    await addUser(t.dataSource, 'ada', { oidcId: 'sub-ada', apiKeyHash: hashApiKey(USER_KEY) });
    await t.dataSource.query(
      `INSERT INTO endpoints (name, url_pattern, api_key_hash) VALUES ('Visa catalog', 'https://x/\${entity_id}', $1)`,
      [hashApiKey(ENDPOINT_KEY)],
    );
    for (const subject of ['sub-ada', 'sub-bob', 'sub-cat']) {
      kc.addUser({ id: subject, username: subject, email: `${subject}@uni.example` });
      rems.addUser(subject, `${subject}@uni.example`);
    }
  }, 2 * APP_START_MS);

  afterAll(async () => {
    await t?.close();
    await kc?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const passport = async (subject: string, query = '', app: CatalogTestApp = t) =>
    (
      await request(app.server)
        .get(`/api/ga4gh/permissions/${subject}${query}`)
        .set('X-API-Key', TEST_GLOBAL_KEY)
        .expect(200)
    ).body as { ga4gh_passport_v1: string[] };

  const granted = async (subject: string) =>
    (await broker.accept(await passport(subject))).map((visa) => visa.claims.ga4gh_visa_v1.value);

  describe('what a visa says', () => {
    beforeAll(async () => {
      expect(await rems.deliver(rems.grant(APPLICATION, 'sub-ada', [dataset]))).toEqual([200]);
    });

    it('publishes the signing key as a JWKS, public members only, for anyone', async () => {
      const res = await request(t.server).get('/api/jwk').expect(200);
      expect(res.headers['cache-control']).toBe('public, max-age=300');
      const { publicJwk } = readVisaKey(readFileSync(firstKey, 'utf8'), 'RS256', 'test');
      expect(res.body).toEqual({ keys: [publicJwk] });
      expect(Object.keys(res.body.keys[0]).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
    });

    it('answers REMS’s shape: one signed ControlledAccessGrants visa per access, as the issue and REMS spell it', async () => {
      const res = await request(t.server)
        .get('/api/ga4gh/permissions/sub-ada')
        .set('X-API-Key', TEST_GLOBAL_KEY)
        .expect(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(Object.keys(res.body)).toEqual(['ga4gh_passport_v1']);
      const [jws] = res.body.ga4gh_passport_v1 as string[];
      const { publicJwk } = readVisaKey(readFileSync(firstKey, 'utf8'), 'RS256', 'test');
      expect(decodeProtectedHeader(jws)).toEqual({
        alg: 'RS256',
        jku: `${base}/api/jwk`,
        typ: 'JWT',
        kid: publicJwk.kid,
      });
      const claims = decodeJwt(jws);
      expect(Object.keys(claims)).toEqual(['iss', 'sub', 'iat', 'exp', 'ga4gh_visa_v1', 'jti']);
      const now = Date.now() / 1000;
      expect(claims).toEqual({
        iss: base,
        sub: 'sub-ada',
        iat: expect.any(Number),
        // The webhook's default expiry (90 days): the visa ends with the access's last day.
        exp: midnight(utcDay(91)),
        jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
        ga4gh_visa_v1: {
          type: 'ControlledAccessGrants',
          value: dataset,
          source: base,
          by: 'dac',
          asserted: midnight(utcDay(0)),
        },
      });
      expect(Math.abs((claims.iat as number) - now)).toBeLessThan(60);
      const accepted = await broker.accept(res.body);
      expect(accepted.map((v) => [v.signer, v.claims.sub])).toEqual([['catalog', 'sub-ada']]);
    });

    it('keeps a visa signed until its access changes: the same token on the next read', async () => {
      const first = await passport('sub-ada');
      expect(await passport('sub-ada')).toEqual(first);
      // The grant changes (REMS sends an end date): the visa is signed again, with the new exp.
      const end = `${utcDay(10)}T12:00:00.000Z`;
      await request(t.server)
        .post('/api/accessreq')
        .send([{ application: APPLICATION, resource: dataset, user: 'sub-ada', mail: null, end }])
        .expect(200);
      const second = await passport('sub-ada');
      expect(second).not.toEqual(first);
      const [visa] = await broker.accept(second);
      expect(visa.claims.exp).toBe(midnight(utcDay(11)));
      expect(visa.claims.jti).not.toBe(decodeJwt(first.ga4gh_passport_v1[0]).jti);
      // Each visa signed is in the audit trail, once, by its jti; one read again is not.
      const issued = await t.dataSource.query<{ object_id: string; change: object }[]>(
        `SELECT object_id, change FROM audit_log WHERE object_type = 'visa' AND action = 'issue'
         AND change->>'subject' = 'sub-ada' ORDER BY id`,
      );
      expect(issued.map((e) => e.object_id).slice(-2)).toEqual([
        decodeJwt(first.ga4gh_passport_v1[0]).jti,
        visa.claims.jti,
      ]);
      expect(issued.at(-1)?.change).toMatchObject({ subject: 'sub-ada', exp: visa.claims.exp });
    });

    it('gives an unknown person an empty passport, and a person without accesses too', async () => {
      expect(await passport('sub-nobody')).toEqual({ ga4gh_passport_v1: [] });
      await addUser(t.dataSource, 'dan', { oidcId: 'sub-dan' });
      expect(await passport('sub-dan')).toEqual({ ga4gh_passport_v1: [] });
    });

    it('gives an access without end a visa of the default lifetime, signed again once half of it has passed', async () => {
      await addUser(t.dataSource, 'eve', { oidcId: 'sub-eve' });
      await t.dataSource.query(
        `INSERT INTO accesses (dataset_id, user_id, status, granted_on)
         SELECT d.id, u.id, 'active', $2 FROM datasets d, users u
         WHERE d.elu_accession = $1 AND u.oidc_id = 'sub-eve'`,
        [dataset, utcDay(-3)],
      );
      const [first] = await broker.accept(await passport('sub-eve'));
      expect(first.claims.exp).toBe((first.claims.iat as number) + 30 * 86_400);
      expect(first.claims.ga4gh_visa_v1.asserted).toBe(midnight(utcDay(-3)));
      // Half its life gone (as if signed 16 days ago): another replica, which has not served
      // it, signs it again rather than hand out the kept one.
      await t.dataSource.query(
        `UPDATE ga4gh_visas SET expires_at = now() + interval '14 days'
         WHERE access_id = (SELECT a.id FROM accesses a JOIN users u ON u.id = a.user_id WHERE u.oidc_id = 'sub-eve')`,
      );
      const replica = await startIntegrationApp(
        { CATALOG_SOURCE: base, GA4GH_VISA_KEY_FILE: firstKey },
        t.databaseUrl,
      );
      try {
        const [renewed] = await broker.accept(await passport('sub-eve', '', replica));
        expect(renewed.claims.jti).not.toBe(first.claims.jti);
        expect(renewed.claims.exp).toBe((renewed.claims.iat as number) + 30 * 86_400);
      } finally {
        await replica.close();
      }
    });

    it('refuses a bad expired parameter with a 400 naming it', async () => {
      const res = await request(t.server)
        .get('/api/ga4gh/permissions/sub-ada?expired=maybe')
        .set('X-API-Key', TEST_GLOBAL_KEY)
        .expect(400);
      expect(res.body.more.errors).toEqual([expect.objectContaining({ parameter: 'expired' })]);
    });

    it('leaves /api/permissions as it was', async () => {
      const res = await request(t.server)
        .get('/api/permissions/sub-ada')
        .set('X-API-Key', TEST_GLOBAL_KEY)
        .expect(200);
      expect(res.body).toEqual([dataset]);
    });
  });

  describe('grants, re-grants, revocations and expiry change the passport on the next read', () => {
    it('follows REMS: grant, revoke, grant again', async () => {
      rems.grant(APPLICATION + 1, 'sub-bob', [dataset, other]);
      expect(await rems.deliver()).toEqual([200, 200]);
      expect((await granted('sub-bob')).sort()).toEqual([dataset, other].sort());
      const before = await passport('sub-bob');
      const revokedJws = before.ga4gh_passport_v1.find(
        (jws) => (decodeJwt(jws).ga4gh_visa_v1 as { value: string }).value === other,
      );

      rems.revoke(APPLICATION + 1, 'sub-bob', [other]);
      expect(await rems.deliver()).toEqual([200]);
      // The revoked access's visa was kept signed; it leaves the passport all the same.
      const after = await passport('sub-bob');
      expect(after.ga4gh_passport_v1).not.toContain(revokedJws);
      expect(await granted('sub-bob')).toEqual([dataset]);
      // Asked for ended ones too, it comes expired at the revocation, not at its planned end.
      const history = await passport('sub-bob', '?expired=true');
      const ended = history.ga4gh_passport_v1.map((jws) => decodeJwt(jws));
      const revoked = ended.find((c) => (c.ga4gh_visa_v1 as { value: string }).value === other);
      expect(revoked?.exp).toBeLessThanOrEqual(Date.now() / 1000);
      expect(revoked?.exp).toBeGreaterThan(Date.now() / 1000 - 60);
      expect((await broker.accept(history)).map((v) => v.claims.ga4gh_visa_v1.value)).toEqual([
        dataset,
      ]);
      expect(broker.refusals).toEqual(['expired']);

      rems.grant(APPLICATION + 1, 'sub-bob', [other]);
      expect(await rems.deliver()).toEqual([200]);
      const again = await passport('sub-bob');
      expect((await broker.accept(again)).map((v) => v.claims.ga4gh_visa_v1.value).sort()).toEqual(
        [dataset, other].sort(),
      );
      // A re-grant is a new visa, never the revoked token again.
      expect(again.ga4gh_passport_v1).not.toContain(revokedJws);
    });

    it('drops an access past its last day at once, and the expiry job changes nothing more', async () => {
      rems.grant(APPLICATION + 2, 'sub-cat', [dataset, other]);
      expect(await rems.deliver()).toEqual([200, 200]);
      expect((await granted('sub-cat')).sort()).toEqual([dataset, other].sort());
      await t.dataSource.query(
        `UPDATE accesses SET grant_expires_on = $1, updated_at = now()
         WHERE request_subject = 'sub-cat' AND dataset_id = (SELECT id FROM datasets WHERE elu_accession = $2)`,
        [utcDay(-1), other],
      );
      expect(await granted('sub-cat')).toEqual([dataset]);
      await t.app.get(AccessExpiryService).expire();
      expect(await granted('sub-cat')).toEqual([dataset]);
    });

    it('lists ended accesses with expired=true, already expired, so a broker drops them', async () => {
      const all = await passport('sub-cat', '?expired=true');
      expect(all.ga4gh_passport_v1).toHaveLength(2);
      const ended = all.ga4gh_passport_v1.map((jws) => decodeJwt(jws));
      const past = ended.find(
        (claims) => claims.ga4gh_visa_v1 && (claims.exp as number) <= Date.now() / 1000,
      );
      expect(past).toMatchObject({ exp: midnight(utcDay(0)), ga4gh_visa_v1: { value: other } });
      expect((await broker.accept(all)).map((v) => v.claims.ga4gh_visa_v1.value)).toEqual([
        dataset,
      ]);
      expect(broker.refusals).toEqual(['expired']);
    });
  });

  describe('a read that overlaps a grant never outlives its revocation', () => {
    // Found by readers racing REMS's deliveries: a read that began before a grant committed and
    // finished after it was remembered under the digest of the accesses without the grant, so
    // after the revocation every read matched it again and served the revoked visa.
    it('serves no revoked visa after the revocation is delivered, whichever key reads, over grant/read/revoke cycles', async () => {
      await addUser(t.dataSource, 'gil', { oidcId: 'sub-gil' });
      kc.addUser({ id: 'sub-gil', username: 'sub-gil', email: 'sub-gil@uni.example' });
      rems.addUser('sub-gil', 'sub-gil@uni.example');
      const application = APPLICATION + 9;
      const stale: string[] = [];
      let readsAfterRevocation = 0;
      /** Reads one passport; whether it holds the dataset's visa. */
      const read = async (key: string) => {
        const res = await request(t.server)
          .get('/api/ga4gh/permissions/sub-gil')
          .set('X-API-Key', key)
          .expect(200);
        return (res.body.ga4gh_passport_v1 as string[]).some(
          (jws) => (decodeJwt(jws).ga4gh_visa_v1 as { value: string }).value === dataset,
        );
      };
      // A few seconds of cycles, and at least three however busy the machine (bounded in count
      // too). In each, readers with either key read while the grant is delivered (some begin
      // before it commits and end after), then the grant is revoked, then each key reads:
      // those reads began after the revocation's 200.
      const deadline = Date.now() + 3_000;
      let cycles = 0;
      while ((Date.now() < deadline || cycles < 3) && cycles < 200) {
        let granting = true;
        const reader = async (key: string) => {
          while (granting) await read(key);
        };
        const readers = [TEST_GLOBAL_KEY, BROKER_KEY, TEST_GLOBAL_KEY].map((key) => reader(key));
        const grant = rems.deliver(rems.grant(application, 'sub-gil', [dataset]));
        try {
          expect(await grant).toEqual([200]);
        } finally {
          granting = false;
          await Promise.all(readers);
        }
        expect(await rems.deliver(rems.revoke(application, 'sub-gil', [dataset]))).toEqual([200]);
        for (const key of [TEST_GLOBAL_KEY, BROKER_KEY]) {
          readsAfterRevocation++;
          if (await read(key))
            stale.push(`cycle ${cycles}: ${key === BROKER_KEY ? 'broker' : 'global'} key`);
        }
        cycles++;
      }
      expect(stale).toEqual([]);
      expect(readsAfterRevocation).toBe(2 * cycles);
      const permissions = await request(t.server)
        .get('/api/permissions/sub-gil')
        .set('X-API-Key', TEST_GLOBAL_KEY)
        .expect(200);
      expect(permissions.body).toEqual([]);
    });

    it('remembers a read whose grant arrived between its two statements under the grant, not before it', async () => {
      await addUser(t.dataSource, 'hal', { oidcId: 'sub-hal' });
      kc.addUser({ id: 'sub-hal', username: 'sub-hal', email: 'sub-hal@uni.example' });
      rems.addUser('sub-hal', 'sub-hal@uni.example');
      const application = APPLICATION + 10;
      const repository = t.app.get(VisasRepository);
      const stateOf = repository.stateOf.bind(repository);
      // The interleaving the cycles above find by chance, made certain: the grant is delivered
      // (through the webhook route) after the read's first statement and before its second.
      const spy = jest.spyOn(repository, 'stateOf').mockImplementationOnce(async (...args) => {
        const state = await stateOf(...args);
        expect(await rems.deliver(rems.grant(application, 'sub-hal', [dataset]))).toEqual([200]);
        return state;
      });
      try {
        expect(await granted('sub-hal')).toEqual([dataset]);
      } finally {
        spy.mockRestore();
      }
      expect(await rems.deliver(rems.revoke(application, 'sub-hal', [dataset]))).toEqual([200]);
      expect(await passport('sub-hal')).toEqual({ ga4gh_passport_v1: [] });
      const broker = await request(t.server)
        .get('/api/ga4gh/permissions/sub-hal')
        .set('X-API-Key', BROKER_KEY)
        .expect(200);
      expect(broker.body).toEqual({ ga4gh_passport_v1: [] });
    });
  });

  describe('who may read visas', () => {
    const get = (subject: string) => request(t.server).get(`/api/ga4gh/permissions/${subject}`);

    it('needs a credential: none is a 401', async () => {
      const res = await get('sub-ada').expect(401);
      expect(res.body).toMatchObject({ status: 'Error', description: 'API key required' });
    });

    it('lets the global key and a broker key read anyone’s visas', async () => {
      await get('sub-ada').set('X-API-Key', TEST_GLOBAL_KEY).expect(200);
      const res = await get('sub-bob').set('X-API-Key', BROKER_KEY).expect(200);
      expect(await broker.accept(res.body)).toHaveLength(2);
    });

    it('confines a broker key to the visas: every other route is a 403', async () => {
      for (const path of ['/api/permissions/sub-ada', '/api/datasets', '/api/users']) {
        const res = await request(t.server).get(path).set('X-API-Key', BROKER_KEY).expect(403);
        expect(res.body.description).toBe('This key may only be used for GA4GH visas');
      }
      await request(t.server)
        .post('/api/registrations')
        .set('X-API-Key', BROKER_KEY)
        .send({})
        .expect(403);
    });

    it('refuses user and endpoint keys, even for the user’s own visas', async () => {
      for (const key of [USER_KEY, ENDPOINT_KEY]) {
        const res = await get('sub-ada').set('X-API-Key', key).expect(403);
        expect(res.body.description).toBe(
          'This operation requires a global or broker or bearer key',
        );
      }
    });

    it('lets a person read their own visas with their login, and nobody else’s', async () => {
      const own = await get('sub-ada')
        .set('Authorization', `Bearer ${await kc.accessToken({ sub: 'sub-ada' })}`)
        .expect(200);
      expect(await broker.accept(own.body)).toHaveLength(1);
      const res = await get('sub-bob')
        .set('Authorization', `Bearer ${await kc.accessToken({ sub: 'sub-ada' })}`)
        .expect(403);
      expect(res.body.description).toBe('A login may only read its own visas');
    });

    it('refuses an unknown key and a forged token with 401', async () => {
      await get('sub-ada').set('X-API-Key', 'not-a-key-0123456789abcdef0123456789').expect(401);
      await get('sub-ada').set('Authorization', 'Bearer not.a.token').expect(401);
    });
  });

  describe('explain=true: why an access has no visa (the explanation of /api/permissions)', () => {
    const explain = (subject: string) =>
      request(t.server).get(`/api/ga4gh/permissions/${subject}?explain=true`);
    const titles = {
      listed: 'Explained: listed',
      terminated: 'Explained: terminated',
      expired: 'Explained: expired',
      noAccession: 'Explained: no accession',
      notExposed: 'Explained: not exposed',
    };
    let accessions: Record<keyof typeof titles, string>;

    beforeAll(async () => {
      accessions = {
        listed: await addDataset(t.dataSource, titles.listed),
        terminated: await addDataset(t.dataSource, titles.terminated),
        expired: await addDataset(t.dataSource, titles.expired),
        noAccession: await addDataset(t.dataSource, titles.noAccession),
        notExposed: await addDataset(t.dataSource, titles.notExposed, false),
      };
      await t.dataSource.query('UPDATE datasets SET elu_accession = NULL WHERE title = $1', [
        titles.noAccession,
      ]);
      const person = await addUser(t.dataSource, 'explained', { oidcId: 'sub-explained' });
      await t.dataSource.query(
        `INSERT INTO accesses (dataset_id, user_id, status, grant_expires_on, access_notes)
         SELECT d.id, $1, o.status::access_status, o.until::date, 'explain test'
         FROM datasets d JOIN (VALUES ($2, 'active', NULL), ($3, 'terminated', NULL),
           ($4, 'active', $7), ($5, 'active', NULL), ($6, 'active', NULL))
           AS o(title, status, until) ON o.title = d.title`,
        [
          person,
          titles.listed,
          titles.terminated,
          titles.expired,
          titles.noAccession,
          titles.notExposed,
          utcDay(-1),
        ],
      );
    });

    it('gives the global key each reason, and the passport holds exactly the listed access', async () => {
      const res = await explain('sub-explained').set('X-API-Key', TEST_GLOBAL_KEY).expect(200);
      expect(res.body).toEqual({
        subject: 'sub-explained',
        accessions: [accessions.listed],
        not_listed: [
          { accession: accessions.expired, title: titles.expired, reason: 'expired' },
          { accession: null, title: titles.noAccession, reason: 'no_accession' },
          { accession: accessions.notExposed, title: titles.notExposed, reason: 'not_exposed' },
          { accession: accessions.terminated, title: titles.terminated, reason: 'terminated' },
        ],
      });
      expect(await granted('sub-explained')).toEqual([accessions.listed]);
    });

    it('answers 404 for an unknown person, where the passport is empty', async () => {
      const res = await explain('sub-nobody').set('X-API-Key', TEST_GLOBAL_KEY).expect(404);
      expect(res.body.status).toBe('Error');
      expect((await passport('sub-nobody')).ga4gh_passport_v1).toEqual([]);
    });

    it('refuses a broker key and a person’s own login (403); user and endpoint keys as ever', async () => {
      const broker = await explain('sub-explained').set('X-API-Key', BROKER_KEY).expect(403);
      expect(broker.body.description).toBe('Only the global key may ask why (explain=true)');
      const own = await explain('sub-ada')
        .set('Authorization', `Bearer ${await kc.accessToken({ sub: 'sub-ada' })}`)
        .expect(403);
      expect(own.body.description).toBe('Only the global key may ask why (explain=true)');
      for (const key of [USER_KEY, ENDPOINT_KEY]) {
        await explain('sub-ada').set('X-API-Key', key).expect(403);
      }
      await explain('sub-ada').expect(401);
    });
  });

  describe('the broker’s acceptance rules (each one can refuse)', () => {
    /** A visa as ours, signed with our key, with the header or claims changed. */
    type Json = Record<string, unknown>;
    const forged = async (change: (h: Json, c: Json) => unknown, keyPath = firstKey) => {
      const [jws] = (await passport('sub-ada')).ga4gh_passport_v1;
      const header = decodeProtectedHeader(jws) as Record<string, unknown>;
      const claims = decodeJwt(jws) as Record<string, unknown>;
      claims.ga4gh_visa_v1 = { ...(claims.ga4gh_visa_v1 as object) };
      change(header, claims);
      const key = readVisaKey(readFileSync(keyPath, 'utf8'), 'RS256', 'k');
      return signCompact(header, claims, key.privateKey!, 'RS256');
    };
    const visaMember = (name: string) => (_h: Json, c: Json) =>
      delete (c.ga4gh_visa_v1 as Json)[name];

    it.each([
      ['without jku', (h: Json) => delete h.jku, 'header'],
      ['without typ', (h: Json) => delete h.typ, 'header'],
      ['without kid', (h: Json) => delete h.kid, 'header'],
      ['without type', visaMember('type'), 'visa value'],
      ['without asserted', visaMember('asserted'), 'visa value'],
      ['without value', visaMember('value'), 'visa value'],
      ['without source', visaMember('source'), 'visa value'],
      [
        'past its exp',
        (_h: Json, c: Json) => (c.exp = Math.floor(Date.now() / 1000) - 1),
        'expired',
      ],
      [
        'from an untrusted jku',
        (h: Json) => (h.jku = 'https://elsewhere.example/api/jwk'),
        'untrusted jku',
      ],
    ] as const)('drops a visa %s', async (_what, change, refusal) => {
      const jws = await forged(change);
      expect(await broker.accept({ ga4gh_passport_v1: [jws] })).toEqual([]);
      expect(broker.refusals).toEqual([refusal]);
    });

    it('drops a visa signed by a key the JWKS does not list, and takes ours unchanged', async () => {
      const stranger = keyFile(dir, 'stranger.pem');
      const jws = await forged(() => undefined, stranger);
      expect(await broker.accept({ ga4gh_passport_v1: [jws] })).toEqual([]);
      expect(broker.refusals).toEqual(['signature']);
      expect(
        await broker.accept({ ga4gh_passport_v1: [await forged(() => undefined)] }),
      ).toHaveLength(1);
    });
  });

  describe('keys', () => {
    it('answers 503 in the envelope on both routes while no key is configured', async () => {
      const off = await startIntegrationApp({}, t.databaseUrl);
      try {
        for (const path of ['/api/jwk', '/api/ga4gh/permissions/sub-ada']) {
          const res = await request(off.server)
            .get(path)
            .set('X-API-Key', TEST_GLOBAL_KEY)
            .expect(503);
          expect(res.body).toEqual({
            status: 'Error',
            description:
              'GA4GH visas are not enabled: set GA4GH_VISA_KEY_FILE to a signing key (docs/integrations.md)',
            more: expect.any(Object),
          });
        }
      } finally {
        await off.close();
      }
    });

    it('rotates: the next key is listed before it signs, the old one until its visas expired', async () => {
      const nextKey = keyFile(dir, 'next-key.pem');
      const kid = (path: string) => readVisaKey(readFileSync(path, 'utf8'), 'RS256', 'k').kid;
      const kids = async (app: CatalogTestApp) =>
        (
          (await request(app.server).get('/api/jwk').expect(200)).body.keys as { kid: string }[]
        ).map((k) => k.kid);
      const signer = async (app: CatalogTestApp) =>
        (await passport('sub-bob', '', app)).ga4gh_passport_v1.map(
          (jws) => decodeProtectedHeader(jws).kid,
        );

      // Step 1: the next key is published; the current one still signs.
      const announcing = await startIntegrationApp(
        { CATALOG_SOURCE: base, GA4GH_VISA_KEY_FILE: firstKey, GA4GH_VISA_NEXT_KEY_FILE: nextKey },
        t.databaseUrl,
      );
      // Step 2: the next key signs; the old one is no longer configured.
      const rotated = await startIntegrationApp(
        { CATALOG_SOURCE: base, GA4GH_VISA_KEY_FILE: nextKey },
        t.databaseUrl,
      );
      try {
        expect(await kids(announcing)).toEqual([kid(firstKey), kid(nextKey)]);
        // Another replica serves the visas kept signed in the database, token for token.
        expect(await passport('sub-bob', '', announcing)).toEqual(await passport('sub-bob'));
        expect(await signer(announcing)).toEqual([kid(firstKey), kid(firstKey)]);

        // The old key signed visas that have not expired: it stays listed.
        expect(await kids(rotated)).toEqual([kid(nextKey), kid(firstKey)]);
        expect(await signer(rotated)).toEqual([kid(nextKey), kid(nextKey)]);

        // Once every visa the old key signed has expired, it is no longer listed (a replica
        // reads the retired keys at most once a minute: a fresh one shows it at once).
        await t.dataSource.query(
          `UPDATE ga4gh_visa_keys SET last_expires_at = now() - interval '1 second' WHERE kid = $1`,
          [kid(firstKey)],
        );
        expect(await kids(rotated)).toEqual([kid(nextKey), kid(firstKey)]);
        const later = await startIntegrationApp(
          { CATALOG_SOURCE: base, GA4GH_VISA_KEY_FILE: nextKey },
          t.databaseUrl,
        );
        try {
          expect(await kids(later)).toEqual([kid(nextKey)]);
        } finally {
          await later.close();
        }
      } finally {
        await announcing.close();
        await rotated.close();
      }
    });
  });
});
