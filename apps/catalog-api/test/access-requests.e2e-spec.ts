import request from 'supertest';
import { TEST_GLOBAL_KEY } from '../../../test/support/catalog-app';
import {
  accessRows,
  addContact,
  addDataset,
  addUser,
  count,
  IntegrationApp,
  startIntegrationApp,
  utcDay,
} from './support/integration-fixture';

// Starting apps on fresh databases takes seconds when the machine is busy.
jest.setTimeout(30_000);

const ENABLED = {
  ACCESSREQ_INTEGRATION_ENABLED: 'true',
  ACCESSREQ_ALLOWED_IP_ADDRESSES: '127.0.0.1',
};

describe('POST /api/accessreq (REMS entitlements)', () => {
  let main: IntegrationApp;
  let disabled: IntegrationApp;
  let noProxy: IntegrationApp;
  let behindProxy: IntegrationApp;
  let ds1: string;
  let ds2: string;

  beforeAll(async () => {
    const first = await startIntegrationApp(ENABLED);
    main = first;
    disabled = await startIntegrationApp(
      { ACCESSREQ_ALLOWED_IP_ADDRESSES: '*' },
      first.databaseUrl,
    );
    noProxy = await startIntegrationApp(
      { ACCESSREQ_INTEGRATION_ENABLED: 'true', ACCESSREQ_ALLOWED_IP_ADDRESSES: '10.1.2.0/24' },
      first.databaseUrl,
    );
    behindProxy = await startIntegrationApp(
      {
        ACCESSREQ_INTEGRATION_ENABLED: 'true',
        ACCESSREQ_ALLOWED_IP_ADDRESSES: '10.1.2.0/24',
        TRUSTED_PROXIES: '127.0.0.1, 192.168.0.0/16',
      },
      first.databaseUrl,
    );
    ds1 = await addDataset(main.dataSource, 'Webhook dataset one');
    ds2 = await addDataset(main.dataSource, 'Webhook dataset two');
  });

  afterAll(async () => {
    for (const app of [main, disabled, noProxy, behindProxy]) await app?.close();
  });

  beforeEach(async () => {
    await main.dataSource.query('TRUNCATE accesses, contacts, audit_log CASCADE');
    await main.dataSource.query(`DELETE FROM users`);
  });

  const post = (app: IntegrationApp, body: unknown, path = '/api/accessreq') =>
    request(app.server)
      .post(path)
      .send(body as object);

  const item = (over: Record<string, unknown> = {}) => ({
    application: 4056,
    resource: ds1,
    user: 'sub-new',
    mail: 'new.person@uni.example',
    end: '2031-08-03T23:59:59.000Z',
    ...over,
  });

  describe('guards, in order', () => {
    it('answers GET with 405 and Allow: POST, even when the integration is off', async () => {
      for (const app of [main, disabled]) {
        const res = await request(app.server).get('/api/accessreq').expect(405);
        expect(res.headers.allow).toBe('POST');
        expect(res.body.status).toBe('Error');
      }
      await request(main.server).get('/api/accessreq/revoke').expect(405);
    });

    it('refuses every call with 403 while the integration is disabled, writing nothing', async () => {
      const res = await post(disabled, [item()]).expect(403);
      expect(res.body).toEqual({
        status: 'Error',
        description: 'Access-request integration is disabled',
        more: {},
      });
      await post(disabled, [item()], '/api/accessreq/revoke').expect(403);
      expect(await count(main.dataSource, 'accesses')).toBe(0);
    });

    it('needs no API key but refuses a caller outside the allow-list with 403', async () => {
      await post(main, [item()]).expect(200);
      const res = await post(noProxy, [item({ application: 1 })]).expect(403);
      expect(res.body.description).toBe('Caller is not allowed to send access requests');
    });

    it('ignores a forged X-Forwarded-For from a peer that is not a trusted proxy', async () => {
      await post(noProxy, [item({ application: 2 })])
        .set('X-Forwarded-For', '10.1.2.3')
        .expect(403);
      expect(await count(main.dataSource, 'accesses')).toBe(0);
    });

    it('believes the hop a trusted proxy appended, and only that hop', async () => {
      // 127.0.0.1 (our proxy) says the client was 10.1.2.3: allowed.
      await post(behindProxy, [item()]).set('X-Forwarded-For', '10.1.2.3').expect(200);
      // Two trusted proxies in a row: the first untrusted hop from the right is the client.
      await post(behindProxy, [item()]).set('X-Forwarded-For', '10.1.2.3, 192.168.7.7').expect(200);
      // The client wrote 10.1.2.3 itself; our proxy appended its real address 203.0.113.7.
      await post(behindProxy, [item()]).set('X-Forwarded-For', '10.1.2.3, 203.0.113.7').expect(403);
      // Without the header the caller is the proxy itself, which is not on the allow-list.
      await post(behindProxy, [item()]).expect(403);
    });

    it('checks the allow-list before reading the entitlements', async () => {
      await post(noProxy, { not: 'an array' }).expect(403);
    });

    it('refuses before parsing: a malformed or non-JSON body still gets the gate 403', async () => {
      for (const app of [disabled, noProxy]) {
        await request(app.server)
          .post('/api/accessreq')
          .set('Content-Type', 'application/json')
          .send('{"not json')
          .expect(403);
        await request(app.server)
          .post('/api/accessreq/revoke')
          .set('Content-Type', 'text/xml')
          .send('<entitlements/>')
          .expect(403);
      }
      // An allowed caller gets the parser's own answers.
      await request(main.server)
        .post('/api/accessreq')
        .set('Content-Type', 'application/json')
        .send('{"not json')
        .expect(400);
    });
  });

  describe('validation (nothing written unless the whole batch is valid)', () => {
    it('rejects a body that is not an array', async () => {
      const res = await post(main, item()).expect(400);
      expect(res.body.description).toBe('Request body must be a JSON array of entitlements');
    });

    it('reports every problem of every item at once', async () => {
      const res = await post(main, [
        item(),
        { application: '12', resource: 7, user: '', mail: 'not-an-email', end: 'next week' },
        'text',
      ]).expect(400);
      const problems = res.body.more.errors as { index: number; field?: string }[];
      expect(problems.map((p) => `${p.index}:${p.field ?? ''}`).sort()).toEqual(
        ['1:application', '1:end', '1:mail', '1:resource', '1:user', '2:'].sort(),
      );
      expect(await count(main.dataSource, 'accesses')).toBe(0);
      expect(await count(main.dataSource, 'contacts')).toBe(0);
    });

    it('names an unknown dataset accession and writes nothing', async () => {
      const res = await post(main, [item(), item({ resource: 'ELU_I_999999' })]).expect(400);
      expect(res.body.description).toBe('Unknown dataset accession: ELU_I_999999');
      expect(res.body.more.errors).toEqual([
        { index: 1, field: 'resource', message: 'unknown dataset accession ELU_I_999999' },
      ]);
      expect(await count(main.dataSource, 'accesses')).toBe(0);
      expect(await count(main.dataSource, 'contacts')).toBe(0);
    });

    it('accepts an empty batch', async () => {
      const res = await post(main, []).expect(200);
      expect(res.body).toEqual({ status: 'Success', created: 0, updated: 0, unchanged: 0 });
    });
  });

  describe('granting', () => {
    it('creates an active access recording the request and the system account', async () => {
      const res = await post(main, [item({ end: '2031-08-03T23:59:59.000Z' })]).expect(200);
      expect(res.body).toEqual({ status: 'Success', created: 1, updated: 0, unchanged: 0 });
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      const [access] = await accessRows(main.dataSource);
      expect(access).toMatchObject({
        dataset: ds1,
        status: 'active',
        granted_on: utcDay(),
        grant_expires_on: '2031-08-03',
        was_generated_automatically: true,
        application_id: 4056,
        request_subject: 'sub-new',
        access_notes: 'Granted automatically by access request #4056',
        created_by: 'system::access-requests',
      });
      const trail = await main.dataSource.query<Record<string, unknown>[]>(
        `SELECT actor_kind, actor_name, action, object_type, change FROM audit_log
         WHERE (object_type = 'access' AND object_id = $1) OR object_type = 'contact' ORDER BY id`,
        [String(access.id)],
      );
      expect(trail).toEqual([
        {
          actor_kind: 'accessreq',
          actor_name: 'system::access-requests',
          action: 'create',
          object_type: 'contact',
          change: expect.objectContaining({ oidc_id: 'sub-new', email: 'new.person@uni.example' }),
        },
        {
          actor_kind: 'accessreq',
          actor_name: 'system::access-requests',
          action: 'grant',
          object_type: 'access',
          change: {
            application: 4056,
            dataset: ds1,
            subject: 'sub-new',
            after: { status: 'active', grant_expires_on: '2031-08-03' },
          },
        },
      ]);
      const [system] = await main.dataSource.query<{ is_active: boolean }[]>(
        `SELECT is_active FROM users WHERE username = 'system::access-requests'`,
      );
      expect(system.is_active).toBe(false);
    });

    it('takes the end date in UTC and defaults to 90 days when there is none', async () => {
      await post(main, [
        item({ end: '2031-01-02T00:30:00+02:00' }),
        item({ application: 9, end: null }),
      ]).expect(200);
      const rows = await accessRows(main.dataSource);
      expect(rows.map((r) => r.grant_expires_on)).toEqual(['2031-01-01', utcDay(90)]);
    });

    it('shows the granted dataset in /api/permissions for the subject', async () => {
      await post(main, [item({ user: 'sub-perm' })]).expect(200);
      const res = await request(main.server)
        .get('/api/permissions/sub-perm')
        .set('X-API-Key', TEST_GLOBAL_KEY)
        .expect(200);
      expect(res.body).toEqual([ds1]);
    });
  });

  describe('person resolution', () => {
    it('finds a user by subject', async () => {
      const id = await addUser(main.dataSource, 'u1', {
        oidcId: 'sub-u1',
        email: 'other@uni.example',
      });
      await post(main, [item({ user: 'sub-u1' })]).expect(200);
      const [access] = await accessRows(main.dataSource);
      expect(access).toMatchObject({ user_id: id, contact_id: null });
    });

    it('finds a contact by subject', async () => {
      const id = await addContact(main.dataSource, { oidcId: 'sub-c1' });
      await post(main, [item({ user: 'sub-c1' })]).expect(200);
      const [access] = await accessRows(main.dataSource);
      expect(access).toMatchObject({ user_id: null, contact_id: id });
    });

    it('prefers the user when a user and a contact share the subject', async () => {
      const userId = await addUser(main.dataSource, 'u-both', { oidcId: 'sub-both' });
      await addContact(main.dataSource, { oidcId: 'sub-both' });
      await post(main, [item({ user: 'sub-both' })]).expect(200);
      expect((await accessRows(main.dataSource))[0].user_id).toBe(userId);
    });

    it('finds a user by mail (case-insensitively) and records the subject on it', async () => {
      const id = await addUser(main.dataSource, 'u2', { email: 'Jane.Doe@Uni.example' });
      await post(main, [item({ user: 'sub-jane', mail: 'jane.doe@uni.example' })]).expect(200);
      expect((await accessRows(main.dataSource))[0].user_id).toBe(id);
      const [user] = await main.dataSource.query<{ oidc_id: string }[]>(
        'SELECT oidc_id FROM users WHERE id = $1',
        [id],
      );
      expect(user.oidc_id).toBe('sub-jane');
    });

    it('finds a contact by mail when it has no subject', async () => {
      const id = await addContact(main.dataSource, { email: 'c2@uni.example' });
      await post(main, [item({ user: 'sub-c2', mail: 'c2@uni.example' })]).expect(200);
      expect((await accessRows(main.dataSource))[0].contact_id).toBe(id);
      const [contact] = await main.dataSource.query<{ oidc_id: string }[]>(
        'SELECT oidc_id FROM contacts WHERE id = $1',
        [id],
      );
      expect(contact.oidc_id).toBe('sub-c2');
    });

    it('does not take over a record found by mail that belongs to another subject', async () => {
      const id = await addUser(main.dataSource, 'u3', {
        email: 'taken@uni.example',
        oidcId: 'sub-owner',
      });
      await post(main, [item({ user: 'sub-intruder', mail: 'taken@uni.example' })]).expect(200);
      const [access] = await accessRows(main.dataSource);
      expect(access.user_id).toBeNull();
      expect(access.contact_id).not.toBeNull();
      const [owner] = await main.dataSource.query<{ oidc_id: string }[]>(
        'SELECT oidc_id FROM users WHERE id = $1',
        [id],
      );
      expect(owner.oidc_id).toBe('sub-owner');
    });

    it('creates a contact of type Other for an unknown person', async () => {
      await post(main, [item({ user: 'sub-stranger', mail: 'stranger@uni.example' })]).expect(200);
      const contacts = await main.dataSource.query<Record<string, unknown>[]>(
        'SELECT id, email, oidc_id, type::text AS type FROM contacts',
      );
      expect(contacts).toEqual([
        {
          id: expect.any(Number),
          email: 'stranger@uni.example',
          oidc_id: 'sub-stranger',
          type: 'Other',
        },
      ]);
      expect((await accessRows(main.dataSource))[0].contact_id).toBe(contacts[0].id);
    });

    it('refuses the whole batch when two records share the email, writing nothing', async () => {
      await addUser(main.dataSource, 'dup-user', { email: 'dup@uni.example' });
      await addContact(main.dataSource, { email: 'DUP@uni.example' });
      const res = await post(main, [
        item({ user: 'sub-fine', mail: 'fine@uni.example' }),
        item({ user: 'sub-dup', mail: 'dup@uni.example' }),
      ]).expect(400);
      expect(res.body.description).toMatch(
        /^Ambiguous person: 2 records share the email dup@uni\.example/,
      );
      expect(res.body.more.errors[0]).toMatchObject({ index: 1, field: 'mail' });
      expect(await count(main.dataSource, 'accesses')).toBe(0);
      expect(await count(main.dataSource, 'contacts')).toBe(1);
      const subjects = await main.dataSource.query('SELECT 1 FROM users WHERE oidc_id IS NOT NULL');
      expect(subjects).toEqual([]);
    });
  });

  describe('idempotency', () => {
    it('changes nothing when the same entitlement arrives again', async () => {
      await post(main, [item()]).expect(200);
      const before = await accessRows(main.dataSource);
      const res = await post(main, [item()]).expect(200);
      expect(res.body).toEqual({ status: 'Success', created: 0, updated: 0, unchanged: 1 });
      expect(await accessRows(main.dataSource)).toEqual(before);
    });

    it('keeps the running expiry when an entitlement without end is repeated', async () => {
      await post(main, [item({ end: null })]).expect(200);
      await main.dataSource.query(`UPDATE accesses SET grant_expires_on = $1`, [utcDay(80)]);
      const res = await post(main, [item({ end: null })]).expect(200);
      expect(res.body.unchanged).toBe(1);
      expect((await accessRows(main.dataSource))[0].grant_expires_on).toBe(utcDay(80));
    });

    it('updates the expiry when the end changes', async () => {
      await post(main, [item()]).expect(200);
      const res = await post(main, [item({ end: '2032-01-31T12:00:00Z' })]).expect(200);
      expect(res.body).toEqual({ status: 'Success', created: 0, updated: 1, unchanged: 0 });
      const rows = await accessRows(main.dataSource);
      expect(rows).toHaveLength(1);
      expect(rows[0].grant_expires_on).toBe('2032-01-31');
    });

    it('counts a duplicate inside one batch as unchanged', async () => {
      const res = await post(main, [item(), item()]).expect(200);
      expect(res.body).toEqual({ status: 'Success', created: 1, updated: 0, unchanged: 1 });
    });

    it('keeps separate accesses for separate applications and datasets', async () => {
      const res = await post(main, [
        item(),
        item({ application: 5000 }),
        item({ resource: ds2 }),
      ]).expect(200);
      expect(res.body.created).toBe(3);
      expect(await count(main.dataSource, 'contacts')).toBe(1);
    });

    it('ends concurrent duplicate deliveries in one access and one contact', async () => {
      const deliveries = await Promise.all(
        Array.from({ length: 6 }, () =>
          post(main, [item({ user: 'sub-race', mail: 'race@uni.example' })]),
        ),
      );
      expect(deliveries.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
      const created = deliveries.reduce((sum, r) => sum + (r.body.created as number), 0);
      const unchanged = deliveries.reduce((sum, r) => sum + (r.body.unchanged as number), 0);
      expect([created, unchanged]).toEqual([1, 5]);
      expect(await count(main.dataSource, 'accesses')).toBe(1);
      expect(await count(main.dataSource, 'contacts')).toBe(1);
    });
  });

  describe('POST /api/accessreq/revoke', () => {
    it('terminates the matching access, noting why, and it leaves /api/permissions', async () => {
      await post(main, [
        item({ user: 'sub-rev' }),
        item({ user: 'sub-rev', resource: ds2 }),
      ]).expect(200);
      const res = await post(main, [item({ user: 'sub-rev' })], '/api/accessreq/revoke').expect(
        200,
      );
      expect(res.body).toEqual({ status: 'Success', created: 0, updated: 1, unchanged: 0 });
      const rows = await accessRows(main.dataSource);
      expect(rows.map((r) => [r.dataset, r.status])).toEqual([
        [ds1, 'terminated'],
        [ds2, 'active'],
      ]);
      expect(rows[0].access_notes).toContain(`Revoked by access request #4056 on ${utcDay()}`);
      const [entry] = await main.dataSource.query<
        { action: string; change: Record<string, unknown> }[]
      >(`SELECT action, change FROM audit_log WHERE object_type = 'access' AND action = 'revoke'`);
      expect(entry.change).toMatchObject({
        before: { status: 'active' },
        after: { status: 'terminated' },
      });
      const perms = await request(main.server)
        .get('/api/permissions/sub-rev')
        .set('X-API-Key', TEST_GLOBAL_KEY)
        .expect(200);
      expect(perms.body).toEqual([ds2]);
    });

    it('is idempotent and creates nothing for entitlements it does not know', async () => {
      await post(main, [item()]).expect(200);
      await post(main, [item()], '/api/accessreq/revoke').expect(200);
      const again = await post(
        main,
        [item(), item({ user: 'sub-never' })],
        '/api/accessreq/revoke',
      ).expect(200);
      expect(again.body).toEqual({ status: 'Success', created: 0, updated: 0, unchanged: 2 });
      expect(await count(main.dataSource, 'contacts')).toBe(1);
    });

    it('validates like the grant', async () => {
      const res = await post(
        main,
        [item({ resource: 'ELU_I_424242' })],
        '/api/accessreq/revoke',
      ).expect(400);
      expect(res.body.description).toBe('Unknown dataset accession: ELU_I_424242');
    });

    it('lets a later grant with a future end reactivate a revoked access', async () => {
      await post(main, [item()]).expect(200);
      await post(main, [item()], '/api/accessreq/revoke').expect(200);
      const res = await post(main, [item({ end: '2033-03-03T00:00:00Z' })]).expect(200);
      expect(res.body.updated).toBe(1);
      const [access] = await accessRows(main.dataSource);
      expect(access.status).toBe('active');
      expect(access.access_notes).toContain('Reactivated by access request #4056');
    });

    it('does not reactivate a terminated access for an end that has already passed', async () => {
      await post(main, [item({ end: `${utcDay(-3)}T10:00:00Z` })]).expect(200);
      await post(main, [item()], '/api/accessreq/revoke').expect(200);
      const res = await post(main, [item({ end: `${utcDay(-3)}T10:00:00Z` })]).expect(200);
      expect(res.body.unchanged).toBe(1);
      expect((await accessRows(main.dataSource))[0].status).toBe('terminated');
    });
  });
});
