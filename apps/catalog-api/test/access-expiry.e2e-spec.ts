import request from 'supertest';
import { Client } from 'pg';
import { TEST_GLOBAL_KEY } from '../../../test/support/catalog-app';
import { AccessExpiryService } from '../src/accesses/access-expiry.service';
import { ADVISORY_LOCKS } from '../src/common/advisory-locks';
import {
  accessRows,
  addContact,
  addDataset,
  startIntegrationApp,
  utcDay,
} from './support/integration-fixture';

// Starting apps on fresh databases takes seconds when the machine is busy.
jest.setTimeout(30_000);

describe('access expiry', () => {
  let t: Awaited<ReturnType<typeof startIntegrationApp>>;
  let expiry: AccessExpiryService;
  const accessions: Record<string, string> = {};
  let contactId: number;

  beforeAll(async () => {
    t = await startIntegrationApp({});
    expiry = t.app.get(AccessExpiryService);
    for (const name of ['yesterday', 'today', 'tomorrow', 'open', 'old']) {
      accessions[name] = await addDataset(t.dataSource, `Expiry ${name}`);
    }
    contactId = await addContact(t.dataSource, { oidcId: 'sub-expiry' });
    const add = (name: string, expires: string | null, status = 'active') =>
      t.dataSource.query(
        `INSERT INTO accesses (dataset_id, contact_id, status, grant_expires_on, access_notes)
         SELECT id, $2, $3, $4, 'Granted by hand' FROM datasets WHERE elu_accession = $1`,
        [accessions[name], contactId, status, expires],
      );
    await add('yesterday', utcDay(-1));
    await add('today', utcDay(0));
    await add('tomorrow', utcDay(1));
    await add('open', null);
    await add('old', utcDay(-400), 'terminated');
  });

  afterAll(() => t?.close());

  const permissions = async () =>
    (
      await request(t.server)
        .get('/api/permissions/sub-expiry')
        .set('X-API-Key', TEST_GLOBAL_KEY)
        .expect(200)
    ).body as string[];

  const expected = () => ['today', 'tomorrow', 'open'].map((n) => accessions[n]).sort();

  it('never lists an expired access in /api/permissions, even before the job ran', async () => {
    expect(await permissions()).toEqual(expected());
  });

  it('terminates accesses whose last day has passed, noting why; today still counts', async () => {
    expect(await expiry.expire()).toEqual({ ran: true, terminated: 1 });
    const rows = await accessRows(t.dataSource);
    const byDataset = new Map(rows.map((r) => [r.dataset, r]));
    expect(byDataset.get(accessions.yesterday)).toMatchObject({
      status: 'terminated',
      access_notes: `Granted by hand\nAutomatically terminated: expired on ${utcDay(-1)}`,
    });
    for (const name of ['today', 'tomorrow', 'open']) {
      expect(byDataset.get(accessions[name])?.status).toBe('active');
    }
    expect(byDataset.get(accessions.old)?.access_notes).toBe('Granted by hand');
    const trail = await t.dataSource.query<{ action: string; object_id: string }[]>(
      `SELECT action, object_id FROM audit_log WHERE object_type = 'access'`,
    );
    expect(trail).toEqual([
      { action: 'expire', object_id: String(byDataset.get(accessions.yesterday)?.id) },
    ]);
    expect(await permissions()).toEqual(expected());
  });

  it('is idempotent', async () => {
    expect(await expiry.expire()).toEqual({ ran: true, terminated: 0 });
  });

  it('steps aside while another replica runs it', async () => {
    await t.dataSource.query(
      `UPDATE accesses SET status = 'active' WHERE status = 'terminated' AND grant_expires_on = $1`,
      [utcDay(-1)],
    );
    const other = new Client({ connectionString: t.databaseUrl });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT pg_advisory_xact_lock($1)', [ADVISORY_LOCKS.accessExpiry]);
      expect(await expiry.expire()).toEqual({ ran: false, terminated: 0 });
      await other.query('COMMIT');
      expect(await expiry.expire()).toEqual({ ran: true, terminated: 1 });
    } finally {
      await other.end();
    }
  });
});
