import request from 'supertest';
import { Client } from 'pg';
import { hashApiKey } from '@app/auth';
import { TEST_GLOBAL_KEY } from '../../../test/support/catalog-app';
import { ADVISORY_LOCKS } from '../src/common/advisory-locks';
import { FakeKeycloak } from './support/fake-keycloak';
import {
  accessRows,
  addContact,
  addDataset,
  addUser,
  count,
  startIntegrationApp,
} from './support/integration-fixture';

// Starting apps on fresh databases takes seconds when the machine is busy.
jest.setTimeout(30_000);

const USER_KEY = 'sync-test-user-key-0123456789abcdef';

interface PersonRow {
  first_name: string;
  last_name: string;
  email: string | null;
  oidc_id: string | null;
}

describe('identity provider (Keycloak)', () => {
  let kc: FakeKeycloak;
  let t: Awaited<ReturnType<typeof startIntegrationApp>>;
  let dataset: string;

  beforeAll(async () => {
    kc = await new FakeKeycloak().start();
    t = await startIntegrationApp({
      IDP_URL: kc.url,
      IDP_REALM: kc.realm,
      IDP_CLIENT_ID: kc.clientId,
      IDP_CLIENT_SECRET: kc.clientSecret,
      IDP_TIMEOUT_MS: '500',
      ACCESSREQ_INTEGRATION_ENABLED: 'true',
      ACCESSREQ_ALLOWED_IP_ADDRESSES: '127.0.0.1',
    });
    dataset = await addDataset(t.dataSource, 'IdP dataset');
  });

  afterAll(async () => {
    await t?.close();
    await kc?.stop();
  });

  beforeEach(async () => {
    kc.users.length = 0;
    await t.dataSource.query(
      'TRUNCATE accesses, contacts, audit_log, access_request_revocations CASCADE',
    );
    await t.dataSource.query('DELETE FROM users');
  });

  const person = async (table: 'users' | 'contacts', id: number): Promise<PersonRow> => {
    const [row] = await t.dataSource.query<PersonRow[]>(
      `SELECT first_name, last_name, email, oidc_id FROM ${table} WHERE id = $1`,
      [id],
    );
    return row;
  };

  const force = () => request(t.server).post('/api/idp/force').set('X-API-Key', TEST_GLOBAL_KEY);

  describe('POST /api/idp/force', () => {
    it('is for the global key only, and POST only', async () => {
      await addUser(t.dataSource, 'keyholder', { apiKeyHash: hashApiKey(USER_KEY) });
      await request(t.server).post('/api/idp/force').expect(401);
      await request(t.server).post('/api/idp/force').set('X-API-Key', USER_KEY).expect(403);
      const res = await request(t.server)
        .get('/api/idp/force')
        .set('X-API-Key', TEST_GLOBAL_KEY)
        .expect(405);
      expect(res.headers.allow).toBe('POST');
      await request(t.server).get('/api/idp/force').expect(405);
    });

    it('matches, updates, creates and skips, and counts each', async () => {
      const bySubject = kc.addUser({
        username: 'ann',
        firstName: 'Ann',
        lastName: 'New-Name',
        email: 'ann@uni.example',
      });
      const annId = await addUser(t.dataSource, 'ann', {
        oidcId: bySubject.id,
        firstName: 'Ann',
        lastName: 'Old-Name',
        email: 'ann@old.example',
      });
      kc.addUser({
        username: 'bob',
        firstName: 'Bob',
        lastName: 'Byemail',
        email: 'Bob@Uni.example',
      });
      const bobId = await addContact(t.dataSource, {
        email: 'bob@uni.example',
        firstName: 'Robert',
        lastName: 'B',
      });
      const same = kc.addUser({
        username: 'cat',
        firstName: 'Cat',
        lastName: 'Same',
        email: 'cat@uni.example',
      });
      await addContact(t.dataSource, {
        oidcId: same.id,
        firstName: 'Cat',
        lastName: 'Same',
        email: 'cat@uni.example',
      });
      kc.addUser({
        username: 'dan',
        firstName: 'Dan',
        lastName: 'Unknown',
        email: 'dan@uni.example',
      });
      kc.addUser({
        username: 'eve',
        firstName: 'Eve',
        lastName: 'Unverified',
        email: 'eve@uni.example',
        emailVerified: false,
      });
      kc.addUser({ username: 'fay', firstName: 'Fay', lastName: 'Dup', email: 'fay@uni.example' });
      await addUser(t.dataSource, 'fay1', { email: 'fay@uni.example' });
      await addContact(t.dataSource, { email: 'FAY@uni.example' });
      kc.addUser({ username: 'gus', firstName: 'Gus' });
      const keep = await addContact(t.dataSource, { email: 'not-in-idp@uni.example' });

      const res = await force().expect(200);
      expect(res.body).toEqual({
        status: 'Success',
        created: 1,
        updated: 2,
        unchanged: 1,
        skipped: 2,
      });

      expect(await person('users', annId)).toEqual({
        first_name: 'Ann',
        last_name: 'New-Name',
        email: 'ann@uni.example',
        oidc_id: bySubject.id,
      });
      expect(await person('contacts', bobId)).toMatchObject({
        first_name: 'Bob',
        last_name: 'Byemail',
        email: 'Bob@Uni.example',
        oidc_id: expect.any(String),
      });
      const created = await t.dataSource.query(
        `SELECT first_name, type::text AS type FROM contacts WHERE email = 'dan@uni.example'`,
      );
      expect(created).toEqual([{ first_name: 'Dan', type: 'Other' }]);
      expect(
        await t.dataSource.query(`SELECT 1 FROM contacts WHERE email = 'eve@uni.example'`),
      ).toEqual([]);
      // Never deletes or deactivates.
      expect(await person('contacts', keep)).toMatchObject({ email: 'not-in-idp@uni.example' });

      const trail = await t.dataSource.query<
        { actor_kind: string; action: string; object_type: string }[]
      >(`SELECT actor_kind, action, object_type FROM audit_log ORDER BY id`);
      expect(trail.map((e) => `${e.actor_kind} ${e.action} ${e.object_type}`).sort()).toEqual(
        ['global create contact', 'global update contact', 'global update user'].sort(),
      );
      const again = await force().expect(200);
      expect(again.body).toEqual({
        status: 'Success',
        created: 0,
        updated: 0,
        unchanged: 4,
        skipped: 2,
      });
    });

    it('reads every page of users and reuses its service-account token', async () => {
      for (let i = 0; i < 205; i++) {
        kc.addUser({
          username: `user${String(i).padStart(3, '0')}`,
          firstName: 'U',
          lastName: String(i),
          email: `u${i}@uni.example`,
        });
      }
      const tokensBefore = kc.requests.token;
      const res = await force().expect(200);
      expect(res.body.created).toBe(205);
      const pages = kc.adminQueries.slice(-3);
      expect(pages.map((q) => new URL(q, 'http://x').searchParams.get('first'))).toEqual([
        '0',
        '100',
        '200',
      ]);
      expect(pages.every((q) => q.includes('emailVerified=true'))).toBe(true);
      await force().expect(200);
      expect(kc.requests.token - tokensBefore).toBeLessThanOrEqual(1);
      expect(await count(t.dataSource, 'contacts')).toBe(205);
    });

    it('gets a new token when the cached one is refused', async () => {
      kc.addUser({ username: 'hal', email: 'hal@uni.example' });
      await force().expect(200);
      kc.revokeTokens();
      const tokensBefore = kc.requests.token;
      await force().expect(200);
      expect(kc.requests.token).toBe(tokensBefore + 1);
    });

    it('refuses a second sync while one holds the lock (409), then runs again', async () => {
      const holder = new Client({ connectionString: t.databaseUrl });
      await holder.connect();
      try {
        await holder.query('SELECT pg_advisory_lock($1)', [ADVISORY_LOCKS.idpSync]);
        const res = await force().expect(409);
        expect(res.body.description).toBe(
          'An identity-provider synchronisation is already running',
        );
        await holder.query('SELECT pg_advisory_unlock($1)', [ADVISORY_LOCKS.idpSync]);
        await force().expect(200);
      } finally {
        await holder.end();
      }
    });

    it('lets only one of two simultaneous syncs run', async () => {
      for (let i = 0; i < 300; i++) kc.addUser({ username: `p${i}`, email: `p${i}@uni.example` });
      const results = await Promise.all([force(), force()]);
      // The second either found the first running (409) or started after it ended; never both at once.
      const statuses = results.map((r) => r.status);
      expect(statuses).toContain(200);
      expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
      expect(await count(t.dataSource, 'contacts')).toBe(300);
    });

    it('answers 503 quickly when the provider is down or does not answer', async () => {
      await kc.down();
      try {
        const res = await force().expect(503);
        expect(res.body).toMatchObject({
          status: 'Error',
          description: 'Identity provider unavailable',
        });
      } finally {
        await kc.up();
      }
      kc.hang();
      try {
        kc.revokeTokens();
        const res = await force().expect(503);
        expect(res.body.more.reason).toBe('identity provider did not answer in time');
      } finally {
        await kc.down();
        await kc.up();
      }
      await force().expect(200);
    });
  });

  describe('access requests with the provider configured', () => {
    const grant = (body: unknown) =>
      request(t.server)
        .post('/api/accessreq')
        .send(body as object);

    it('takes names and email from the provider, not from the request', async () => {
      const account = kc.addUser({
        username: 'ivy',
        firstName: 'Ivy',
        lastName: 'Idp',
        email: 'ivy@idp.example',
      });
      const res = await grant([
        {
          application: 1,
          resource: dataset,
          user: account.id,
          mail: 'ivy@rems.example',
          end: null,
        },
      ]).expect(200);
      expect(res.body.created).toBe(1);
      const [contact] = await t.dataSource.query<PersonRow[]>(
        'SELECT first_name, last_name, email, oidc_id FROM contacts',
      );
      expect(contact).toEqual({
        first_name: 'Ivy',
        last_name: 'Idp',
        email: 'ivy@idp.example',
        oidc_id: account.id,
      });
    });

    it('matches by the verified provider email and updates the record from the provider', async () => {
      const account = kc.addUser({
        username: 'jo',
        firstName: 'Jo',
        lastName: 'March',
        email: 'jo@uni.example',
      });
      const userId = await addUser(t.dataSource, 'jo', {
        email: 'JO@uni.example',
        firstName: 'J',
        lastName: 'M',
      });
      await grant([
        {
          application: 2,
          resource: dataset,
          user: account.id,
          mail: 'elsewhere@rems.example',
          end: null,
        },
      ]).expect(200);
      expect(await person('users', userId)).toEqual({
        first_name: 'Jo',
        last_name: 'March',
        email: 'jo@uni.example',
        oidc_id: account.id,
      });
      expect((await accessRows(t.dataSource))[0].user_id).toBe(userId);
    });

    it('refuses an account whose email the provider has not verified, as DAISY does', async () => {
      // DAISY refuses these (elixir-luxembourg/daisy core/lcsb/oidc.py get_external_user_info
      // raises ExternalUserNotVerifiedException, and its webhook answers 500 so REMS retries).
      const account = kc.addUser({
        username: 'kim',
        firstName: 'Kim',
        lastName: 'K',
        email: 'kim@uni.example',
        emailVerified: false,
      });
      const userId = await addUser(t.dataSource, 'kim', { email: 'kim@uni.example' });
      const delivery = [
        { application: 3, resource: dataset, user: account.id, mail: 'kim@uni.example', end: null },
      ];
      const res = await grant(delivery).expect(400);
      expect(res.body.more.errors).toEqual([
        {
          index: 0,
          field: 'user',
          message: `the identity provider has not verified the email of ${account.id}`,
        },
      ]);
      expect(await count(t.dataSource, 'accesses')).toBe(0);
      expect(await count(t.dataSource, 'contacts')).toBe(0);
      expect((await person('users', userId)).oidc_id).toBeNull();
      // Once the person verifies the address, REMS's next retry of the same delivery succeeds.
      account.emailVerified = true;
      expect((await grant(delivery).expect(200)).body.created).toBe(1);
      expect((await accessRows(t.dataSource))[0].user_id).toBe(userId);
    });

    it('refuses an account without any email (Keycloak leaves it unverified)', async () => {
      const account = kc.addUser({ username: 'noe', emailVerified: false });
      const res = await grant([
        { application: 6, resource: dataset, user: account.id, mail: null, end: null },
      ]).expect(400);
      expect(res.body.more.errors[0]).toMatchObject({ index: 0, field: 'user' });
      expect(await count(t.dataSource, 'accesses')).toBe(0);
    });

    it('refuses a subject the provider does not know, writing nothing', async () => {
      const res = await grant([
        {
          application: 4,
          resource: dataset,
          user: 'no-such-subject',
          mail: 'x@uni.example',
          end: null,
        },
      ]).expect(400);
      expect(res.body.more.errors).toEqual([
        { index: 0, field: 'user', message: 'unknown to the identity provider: no-such-subject' },
      ]);
      expect(await count(t.dataSource, 'accesses')).toBe(0);
    });

    it('answers 503 (so REMS retries) when the provider is down, writing nothing', async () => {
      const account = kc.addUser({ username: 'lee', email: 'lee@uni.example' });
      await kc.down();
      try {
        const res = await grant([
          { application: 5, resource: dataset, user: account.id, mail: null, end: null },
        ]).expect(503);
        expect(res.body.description).toBe('Identity provider unavailable');
      } finally {
        await kc.up();
      }
      expect(await count(t.dataSource, 'accesses')).toBe(0);
      await grant([
        { application: 5, resource: dataset, user: account.id, mail: null, end: null },
      ]).expect(200);
    });
  });
});
