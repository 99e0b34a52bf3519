import { Client } from 'pg';
import { runCli } from '../src/cli/run-cli';
import { ADVISORY_LOCKS } from '../src/common/advisory-locks';
import { FakeKeycloak } from './support/fake-keycloak';
import { addContact, addDataset, startIntegrationApp, utcDay } from './support/integration-fixture';

// Starting apps on fresh databases takes seconds when the machine is busy.
jest.setTimeout(30_000);

describe('npm run catalog -- expire-accesses | idp-sync', () => {
  let kc: FakeKeycloak;
  let t: Awaited<ReturnType<typeof startIntegrationApp>>;

  beforeAll(async () => {
    kc = await new FakeKeycloak().start();
    t = await startIntegrationApp({});
  });
  afterAll(async () => {
    await t?.close();
    await kc?.stop();
  });

  async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    return cliWith(kc.url, ...argv);
  }

  async function cliWith(
    idpUrl: string,
    ...argv: string[]
  ): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await runCli(
      argv,
      {
        DATABASE_URL: t.databaseUrl,
        CATALOG_CLI_USER: 'operator',
        IDP_URL: idpUrl,
        IDP_REALM: kc.realm,
        IDP_CLIENT_ID: kc.clientId,
        IDP_CLIENT_SECRET: kc.clientSecret,
      },
      { out: (s) => (out += s), err: (s) => (err += s), cwd: process.cwd() },
    );
    return { code, out, err };
  }

  it('expire-accesses terminates what has expired and records the operator', async () => {
    const accession = await addDataset(t.dataSource, 'CLI expiry');
    const contact = await addContact(t.dataSource, { oidcId: 'sub-cli' });
    await t.dataSource.query(
      `INSERT INTO accesses (dataset_id, contact_id, status, grant_expires_on)
       SELECT id, $2, 'active', unnest($3::date[]) FROM datasets WHERE elu_accession = $1`,
      [accession, contact, [utcDay(-2), utcDay(0)]],
    );
    const run = await cli('expire-accesses');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.out)).toEqual({ ran: true, terminated: 1 });
    const trail = await t.dataSource.query(
      `SELECT actor_kind, actor_name FROM audit_log WHERE action = 'expire'`,
    );
    expect(trail).toEqual([{ actor_kind: 'cli', actor_name: 'operator' }]);
  });

  it('idp-sync runs the synchronisation and prints its counts', async () => {
    kc.addUser({ username: 'zoe', firstName: 'Zoe', lastName: 'Z', email: 'zoe@uni.example' });
    const run = await cli('idp-sync');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.out)).toEqual({ created: 1, updated: 0, unchanged: 0, skipped: 0 });
  });

  it('idp-sync exits 1 with the reason while another sync holds the lock', async () => {
    const holder = new Client({ connectionString: t.databaseUrl });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [ADVISORY_LOCKS.idpSync]);
      const run = await cli('idp-sync');
      expect(run.code).toBe(1);
      expect(run.err).toContain('An identity-provider synchronisation is already running');
    } finally {
      await holder.end();
    }
  });

  it('idp-sync exits 2 when the identity provider cannot be reached', async () => {
    // A port nothing listens on: connection refused at once.
    const run = await cliWith('http://127.0.0.1:9', 'idp-sync');
    expect(run.code).toBe(2);
    expect(run.err).toContain('cannot reach a dependency');
  });

  it('rejects options the commands do not take', async () => {
    const run = await cli('expire-accesses', '--dry-run');
    expect(run.code).toBe(1);
    expect(run.err).toContain('unknown option --dry-run');
  });
});
