import { Logger } from '@nestjs/common';
import request from 'supertest';
import { CatalogTestApp, TEST_GLOBAL_KEY } from '../../../test/support/catalog-app';
import { metricSample } from '../../../test/support/prometheus-text';
import { FakeRems } from './support/fake-rems';
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
import { APP_START_MS } from '../../../test/support/timeouts';

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

  // Four apps start, one after another.
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
  }, 4 * APP_START_MS);

  afterAll(async () => {
    for (const app of [main, disabled, noProxy, behindProxy]) await app?.close();
  });

  beforeEach(async () => {
    await main.dataSource.query(
      'TRUNCATE accesses, contacts, audit_log, access_request_revocations CASCADE',
    );
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

    it('gates the paths whatever their case, as the router routes them (before parsing)', async () => {
      for (const path of ['/API/ACCESSREQ', '/Api/AccessReq/Revoke', '/api/ACCESSREQ/revoke']) {
        for (const app of [disabled, noProxy]) {
          const res = await request(app.server)
            .post(path)
            .set('Content-Type', 'application/json')
            .send('{"not json')
            .expect(403);
          expect(res.body.status).toBe('Error');
        }
        // The router does route them: an allowed caller reaches the webhook's validation.
        const routed = await post(main, { not: 'an array' }, path).expect(400);
        expect(routed.body.description).toBe('Request body must be a JSON array of entitlements');
      }
      expect(await count(main.dataSource, 'accesses')).toBe(0);
    });

    it('answers a REMS event notification (PUT) with an error saying where entitlements go', async () => {
      // An event as REMS's :event-notification-targets PUTs it (CSCfi/rems
      // src/clj/rems/event_notification.clj, docs/event-notification.md).
      const event = {
        'event/id': 668,
        'event/type': 'application.event/approved',
        'event/actor': 'handler',
        'event/time': '2026-05-01T10:00:00.000Z',
        'application/id': 4056,
        'entitlement/end': null,
        'event/application': { 'application/id': 4056 },
      };
      for (const [app, path] of [
        [main, '/api/accessreq'],
        [disabled, '/api/accessreq'],
        [noProxy, '/api/accessreq/revoke'],
      ] as const) {
        const res = await request(app.server).put(path).send(event).expect(405);
        expect(res.headers.allow).toBe('POST');
        expect(res.body).toEqual({
          status: 'Error',
          description: expect.stringMatching(
            /^This is the REMS entitlement webhook, not a REMS event-notification target/,
          ),
          more: {
            allowed: ['POST'],
            entitlements_target: { add: '/api/accessreq', remove: '/api/accessreq/revoke' },
          },
        });
        expect(res.body.description).toContain(':entitlements-target');
      }
      expect(await count(main.dataSource, 'accesses')).toBe(0);
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
            duo: [],
            after: { status: 'active', grant_expires_on: '2031-08-03' },
          },
        },
      ]);
      const [system] = await main.dataSource.query<{ is_active: boolean }[]>(
        `SELECT is_active FROM users WHERE username = 'system::access-requests'`,
      );
      expect(system.is_active).toBe(false);
    });

    it("records the dataset's data-use terms as DUO IRIs in the grant's trail entry", async () => {
      // Two declarations: the terms of both, each once; IP has no DUO term and is left out.
      await main.dataSource.query(
        `WITH dd AS (INSERT INTO data_declarations (dataset_id, title)
           SELECT id, t FROM datasets, (VALUES ('x'), ('y')) v(t) WHERE elu_accession = $1
           RETURNING id, title)
         INSERT INTO use_conditions (data_declaration_id, use_class, use_condition_rule)
         SELECT id, c::use_class, 'PERMISSION' FROM dd,
           unnest(CASE WHEN title = 'x' THEN ARRAY['HMB', 'IP'] ELSE ARRAY['GRU', 'HMB'] END) c`,
        [ds2],
      );
      try {
        await post(main, [item({ resource: ds2 })]).expect(200);
        const [entry] = await main.dataSource.query<{ change: { duo: string[] } }[]>(
          `SELECT change FROM audit_log WHERE object_type = 'access' AND action = 'grant'`,
        );
        expect(entry.change.duo).toEqual([
          'http://purl.obolibrary.org/obo/DUO_0000006',
          'http://purl.obolibrary.org/obo/DUO_0000042',
        ]);
      } finally {
        await main.dataSource.query(
          `DELETE FROM data_declarations WHERE dataset_id =
             (SELECT id FROM datasets WHERE elu_accession = $1)`,
          [ds2],
        );
      }
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

    it('takes identical rows of one entitlement in a batch as one, counted once', async () => {
      const res = await post(main, [item(), item()]).expect(200);
      expect(res.body).toEqual({ status: 'Success', created: 1, updated: 0, unchanged: 0 });
      expect(await count(main.dataSource, 'accesses')).toBe(1);
    });

    it('gives the rows of one entitlement the latest end, whatever their order', async () => {
      const res = await post(main, [
        item({ end: '2031-08-03T00:00:00.000Z' }),
        item({ end: '2034-01-01T00:00:00.000Z' }),
        item({ end: `${utcDay(-30)}T00:00:00.000Z` }),
      ]).expect(200);
      expect(res.body.created).toBe(1);
      expect((await accessRows(main.dataSource))[0].grant_expires_on).toBe('2034-01-01');
    });

    it('never shortens or ends a running access with history rows alone', async () => {
      await post(main, [item({ end: null })]).expect(200);
      const res = await post(main, [item({ end: `${utcDay(-2)}T09:00:00.000Z` })]).expect(200);
      expect(res.body.unchanged).toBe(1);
      const [access] = await accessRows(main.dataSource);
      expect(access).toMatchObject({ status: 'active', grant_expires_on: utcDay(90) });
    });

    it('applies each entitlement of a mixed delivery on its own merits', async () => {
      const revokedAt = new Date(Date.now() - 3_600_000).toISOString();
      const key = (application: number, end: string | null = null) =>
        item({ application, user: 'sub-mix', end });
      await post(main, [key(1), key(2), key(3), key(4)]).expect(200);
      await post(main, [key(3, revokedAt), key(4, revokedAt)], '/api/accessreq/revoke').expect(200);
      const res = await post(main, [
        key(1), // running, open again: unchanged
        key(2, '2035-05-05T00:00:00.000Z'), // running, new end: updated
        key(3), // revoked, built before the revocation: ignored
        key(4, revokedAt), // revoked, re-granted after it: reactivated
        key(4),
        key(5), // new: created
      ]).expect(200);
      expect(res.body).toEqual({ status: 'Success', created: 1, updated: 2, unchanged: 2 });
      const rows = await accessRows(main.dataSource);
      expect(rows.map((r) => [r.application_id, r.status, r.grant_expires_on])).toEqual([
        [1, 'active', utcDay(90)],
        [2, 'active', '2035-05-05'],
        [3, 'terminated', utcDay(90)],
        [4, 'active', utcDay(90)],
        [5, 'active', utcDay(90)],
      ]);
      const trail = await main.dataSource.query<{ action: string; object_id: string }[]>(
        `SELECT action, object_id FROM audit_log WHERE object_type = 'access' ORDER BY id`,
      );
      const id = (application: number) =>
        String(rows.find((r) => r.application_id === application)?.id);
      expect(trail.slice(-3)).toEqual([
        { action: 'update', object_id: id(2) },
        { action: 'update', object_id: id(4) },
        { action: 'grant', object_id: id(5) },
      ]);
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

  describe('refusals REMS would retry for a day: metric by reason and one log line', () => {
    const refusals = async (app: IntegrationApp, route: string, reason: string) => {
      const res = await request(app.server).get('/metrics').expect(200);
      return metricSample(res.text, 'catalog_access_request_refusals_total', { route, reason });
    };

    it('counts each refused delivery under its reasons and names the items in one warning', async () => {
      const before = {
        dataset: await refusals(main, 'grant', 'unknown_dataset'),
        invalid: await refusals(main, 'revoke', 'invalid_request'),
      };
      expect(before.dataset).toBeGreaterThanOrEqual(0);
      const warn = jest.spyOn(Logger.prototype, 'warn');
      try {
        await post(main, [item(), item({ resource: 'ELU_I_999999', user: 'sub-x' })]).expect(400);
        await post(main, [item({ application: 'x' })], '/api/accessreq/revoke').expect(400);
        expect(await refusals(main, 'grant', 'unknown_dataset')).toBe((before.dataset ?? 0) + 1);
        expect(await refusals(main, 'revoke', 'invalid_request')).toBe((before.invalid ?? 0) + 1);
        const lines = warn.mock.calls.filter((call) => call[1] === 'access request refused');
        expect(lines).toHaveLength(2);
        expect(lines[0][0]).toMatchObject({
          route: 'grant',
          reasons: ['unknown_dataset'],
          status: 400,
          items: [
            {
              index: 1,
              application: 4056,
              resource: 'ELU_I_999999',
              user: 'sub-x',
              field: 'resource',
              reason: 'unknown_dataset',
              message: 'unknown dataset accession ELU_I_999999',
            },
          ],
        });
        expect(lines[1][0]).toMatchObject({
          route: 'revoke',
          reasons: ['invalid_request'],
          items: [{ index: 0, application: 'x', field: 'application' }],
        });
      } finally {
        warn.mockRestore();
      }
    });

    it('counts the gate refusals (switched off, caller not allowed) and event notifications', async () => {
      const before = {
        disabled: await refusals(disabled, 'grant', 'integration_disabled'),
        caller: await refusals(noProxy, 'revoke', 'caller_not_allowed'),
        event: await refusals(main, 'grant', 'event_notification'),
      };
      await post(disabled, [item()]).expect(403);
      await post(noProxy, [item()], '/api/accessreq/revoke').expect(403);
      await request(main.server).put('/api/accessreq').send({ 'event/id': 1 }).expect(405);
      expect(await refusals(disabled, 'grant', 'integration_disabled')).toBe(
        (before.disabled ?? 0) + 1,
      );
      expect(await refusals(noProxy, 'revoke', 'caller_not_allowed')).toBe(
        (before.caller ?? 0) + 1,
      );
      expect(await refusals(main, 'grant', 'event_notification')).toBe((before.event ?? 0) + 1);
    });

    it('does not count deliveries it accepted', async () => {
      const text = async () => (await request(main.server).get('/metrics')).text;
      const sum = (t: string) =>
        t
          .split('\n')
          .filter((l) => l.startsWith('catalog_access_request_refusals_total{'))
          .reduce((total, l) => total + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
      const before = sum(await text());
      await post(main, [item()]).expect(200);
      await post(main, [item()], '/api/accessreq/revoke').expect(200);
      expect(sum(await text())).toBe(before);
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

    it('reactivates a revoked access for a re-grant carrying the revoked row', async () => {
      const revokedAt = new Date(Date.now() - 3_600_000).toISOString();
      await post(main, [item({ end: null })]).expect(200);
      await post(main, [item({ end: revokedAt })], '/api/accessreq/revoke').expect(200);
      const res = await post(main, [
        item({ end: revokedAt }),
        item({ end: '2033-03-03T00:00:00Z' }),
      ]).expect(200);
      expect(res.body.updated).toBe(1);
      const [access] = await accessRows(main.dataSource);
      expect(access).toMatchObject({ status: 'active', grant_expires_on: '2033-03-03' });
      expect(access.access_notes).toContain('Reactivated by access request #4056');
    });

    it('ignores a grant built before the revocation (a retry that lost the race)', async () => {
      const revokedAt = new Date(Date.now() - 3_600_000).toISOString();
      await post(main, [item({ end: null })]).expect(200);
      await post(main, [item({ end: revokedAt })], '/api/accessreq/revoke').expect(200);
      for (const stale of [[item({ end: null })], [item({ end: '2033-03-03T00:00:00Z' })]]) {
        const res = await post(main, stale).expect(200);
        expect(res.body).toEqual({ status: 'Success', created: 0, updated: 0, unchanged: 1 });
      }
      expect((await accessRows(main.dataSource))[0].status).toBe('terminated');
    });

    it('records a revocation that overtook its grant, so the grant changes nothing', async () => {
      const revokedAt = new Date(Date.now() - 60_000).toISOString();
      const res = await post(main, [item({ end: revokedAt })], '/api/accessreq/revoke').expect(200);
      expect(res.body.unchanged).toBe(1);
      await post(main, [item({ end: null })]).expect(200);
      expect(await count(main.dataSource, 'accesses')).toBe(0);
      // The re-grant REMS makes after that revocation carries its row, and is applied.
      await post(main, [item({ end: revokedAt }), item({ end: null })]).expect(200);
      expect((await accessRows(main.dataSource))[0].status).toBe('active');
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

/**
 * The webhook driven by deliveries built as CSCfi/rems builds them (test/support/fake-rems.ts
 * follows src/clj/rems/db/entitlements.clj, resources/sql/queries.sql and
 * src/clj/rems/db/outbox.clj), POSTed over HTTP to a listening app like REMS does.
 */
describe('as CSCfi/rems pushes entitlements (:entitlements-target)', () => {
  let t: CatalogTestApp;
  let rems: FakeRems;
  let dataset: string;
  const app = 4056;

  beforeAll(async () => {
    t = await startIntegrationApp(ENABLED);
    await t.app.listen(0, '127.0.0.1');
    const base = await t.app.getUrl();
    rems = new FakeRems({ add: `${base}/api/accessreq`, remove: `${base}/api/accessreq/revoke` });
    dataset = await addDataset(t.dataSource, 'REMS resource');
  });

  afterAll(async () => {
    await t?.close();
  });

  const permissions = async (subject: string) =>
    (
      await request(t.server)
        .get(`/api/permissions/${subject}`)
        .set('X-API-Key', TEST_GLOBAL_KEY)
        .expect(200)
    ).body as string[];

  it('grants, revokes, and grants again: the re-granted access shows in /api/permissions', async () => {
    rems.addUser('sub-regrant', 'regrant@uni.example');
    const [add] = rems.grant(app, 'sub-regrant', [dataset]);
    expect(await rems.deliver([add])).toEqual([200]);
    expect(await permissions('sub-regrant')).toEqual([dataset]);

    const [remove] = rems.revoke(app, 'sub-regrant', [dataset]);
    expect(FakeRems.payload(remove)).toEqual([
      expect.objectContaining({
        end: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      }),
    ]);
    expect(await rems.deliver([remove])).toEqual([200]);
    expect(await permissions('sub-regrant')).toEqual([]);

    // REMS re-adds the member: the :add carries the ended row and the new open one.
    const [again] = rems.grant(app, 'sub-regrant', [dataset]);
    expect(FakeRems.payload(again).map((row) => row.end)).toEqual([
      FakeRems.payload(remove)[0].end,
      null,
    ]);
    expect(await rems.deliver([again])).toEqual([200]);
    expect(await permissions('sub-regrant')).toEqual([dataset]);
    const [access] = (await accessRows(t.dataSource)).filter(
      (row) => row.request_subject === 'sub-regrant',
    );
    expect(access).toMatchObject({ status: 'active', grant_expires_on: utcDay(90) });
  });

  it('keeps an open access open when the history rows arrive before the revocation', async () => {
    rems.addUser('sub-history', null);
    await rems.deliver(rems.grant(app, 'sub-history', [dataset]));
    const [remove] = rems.revoke(app, 'sub-history', [dataset]);
    const [again] = rems.grant(app, 'sub-history', [dataset]);
    // The revocation's delivery fails for now (REMS will retry it); the re-grant arrives first.
    expect(await rems.deliver([again])).toEqual([200]);
    expect(await permissions('sub-history')).toEqual([dataset]);
    // The retried revocation is older than the re-grant already applied: it changes nothing.
    expect(await rems.deliver([remove])).toEqual([200]);
    expect(await permissions('sub-history')).toEqual([dataset]);
  });

  it('lets a revocation that overtook its grant win over the late grant', async () => {
    rems.addUser('sub-race', 'race@uni.example');
    const [add] = rems.grant(app, 'sub-race', [dataset]);
    const [remove] = rems.revoke(app, 'sub-race', [dataset]);
    expect(await rems.deliver([remove, add])).toEqual([200, 200]);
    expect(await permissions('sub-race')).toEqual([]);
    expect(await count(t.dataSource, 'accesses')).toBe(
      (await accessRows(t.dataSource)).filter((row) => row.request_subject !== 'sub-race').length,
    );
  });

  it('refuses a delivery for a dataset the catalog lacks, and takes the retry once it exists', async () => {
    rems.addUser('sub-later', 'later@uni.example');
    const [add] = rems.grant(app, 'sub-later', ['ELU_I_77777777']);
    expect(await rems.deliver([add])).toEqual([400]);
    expect(rems.outbox).toContain(add);
    await t.dataSource.query(
      `INSERT INTO datasets (title, elu_accession) VALUES ('Late', 'ELU_I_77777777')`,
    );
    expect(await rems.deliver([add])).toEqual([200]);
    expect(add.statuses).toEqual([400, 200]);
    const [access] = (await accessRows(t.dataSource)).filter(
      (row) => row.request_subject === 'sub-later',
    );
    expect(access).toMatchObject({ dataset: 'ELU_I_77777777', status: 'active' });
  });
});
