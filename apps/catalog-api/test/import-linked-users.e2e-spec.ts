import { CatalogTestApp, startCatalogApp } from '../../../test/support/catalog-app';
import { writer } from './catalog-writes.fixture';

/**
 * People an import links to users (a project's PI and researchers, a dataset's PI, a contract's
 * local custodians) are exported as the user. A user with no affiliation, as the identity
 * provider's sync creates them, used to make the person vanish from the export (issue 55, item
 * 9: a project read back `contacts: []`); they now take the affiliation the import states.
 */
describe('catalog imports: people who are users keep the affiliation the import states', () => {
  let t: CatalogTestApp;
  let w: ReturnType<typeof writer>;
  beforeAll(async () => {
    t = await startCatalogApp();
    w = writer(t.server);
    await w
      .post('/api/partners', {
        items: [
          { name: 'Stated Institute', acronym: 'STI' },
          { name: 'Own Institute', acronym: 'OWN' },
        ],
      })
      .expect(200);
    const user = (username: string, affiliation?: string) =>
      w
        .post('/api/admin/users', {
          username,
          email: `${username}@example.org`,
          first_name: username,
          last_name: 'User',
          ...(affiliation ? { affiliation } : {}),
        })
        .expect(201);
    // As the IdP sync makes them: no affiliation.
    await user('pia');
    await user('rea');
    await user('dap');
    await user('cus');
    // An administrator set this one's affiliation: the import must not replace it.
    await user('own', 'OWN');
  });
  afterAll(() => t.close());

  const person = (username: string, role: string, affiliations: string[]) => ({
    first_name: username,
    last_name: 'User',
    email: `${username}@example.org`,
    role,
    affiliations,
  });
  const affiliationOf = async (username: string) =>
    (
      await t.dataSource.query<{ name: string | null }[]>(
        `SELECT p.name FROM users u LEFT JOIN partners p ON p.id = u.affiliation_id
          WHERE u.username = $1`,
        [username],
      )
    )[0].name;

  it("a project's PI and researcher who are users are exported with the stated affiliation", async () => {
    await w
      .post('/api/projects', {
        items: [
          {
            name: 'Linked people',
            acronym: 'LINK',
            contacts: [
              // An unknown partner is skipped; the first known one is taken.
              person('pia', 'Principal_Investigator', ['Nowhere Institute', 'Stated Institute']),
              person('rea', 'Researcher', ['Stated Institute']),
              person('own', 'Principal_Investigator', ['Stated Institute']),
            ],
          },
        ],
      })
      .expect(200);
    const res = await w.get('/api/projects').expect(200);
    const project = (res.body.items as { acronym: string; contacts: object[] }[]).find(
      (p) => p.acronym === 'LINK',
    );
    expect(project?.contacts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          email: 'pia@example.org',
          role: 'Principal_Investigator',
          affiliations: ['Stated Institute'],
        }),
        expect.objectContaining({ email: 'rea@example.org', affiliations: ['Stated Institute'] }),
        expect.objectContaining({ email: 'own@example.org', affiliations: ['Own Institute'] }),
      ]),
    );
    expect(project?.contacts).toHaveLength(3);
    expect(await affiliationOf('own')).toBe('Own Institute');
    // The change to each user is audited with the import; the untouched user is not.
    const audit = await w.get('/api/admin/audit?object=user').expect(200);
    const changed = (audit.body.results as { action: string; change: object }[]).filter(
      (e) => e.action === 'update',
    );
    expect(changed).toHaveLength(2);
    expect(changed.map((e) => e.change)).toEqual([
      { affiliation_id: expect.any(Number) },
      { affiliation_id: expect.any(Number) },
    ]);
  });

  it("a dataset's PI who is a user is exported with the stated affiliation", async () => {
    await w
      .post('/api/datasets', {
        items: [
          {
            name: 'Linked dataset',
            contacts: [person('dap', 'Principal_Investigator', ['Stated Institute'])],
          },
        ],
      })
      .expect(200);
    const res = await w.get('/api/datasets').expect(200);
    const dataset = (res.body.items as { name: string; contacts: object[] }[]).find(
      (d) => d.name === 'Linked dataset',
    );
    expect(dataset?.contacts).toEqual([
      expect.objectContaining({ email: 'dap@example.org', affiliations: ['Stated Institute'] }),
    ]);
  });

  it("a contract's local custodian who is a user is exported with the stated affiliation", async () => {
    await w
      .post('/api/contracts', {
        items: [
          {
            name: 'Linked contract',
            project: 'LINK',
            local_custodians: [person('cus', 'Principal_Investigator', ['Stated Institute'])],
          },
        ],
      })
      .expect(200);
    // Contracts are listed only beside an exposed dataset; the custodian's row is what the
    // export reads (the project's export above reads the same columns).
    expect(await affiliationOf('cus')).toBe('Stated Institute');
  });

  it('a refused import changes no user', async () => {
    await w
      .post('/api/admin/users', {
        username: 'ref',
        email: 'ref@example.org',
        first_name: 'ref',
        last_name: 'User',
      })
      .expect(201);
    await w
      .post('/api/projects', {
        items: [
          {
            name: 'Refused',
            acronym: 'REF',
            contacts: [
              person('ref', 'Principal_Investigator', ['Stated Institute']),
              person('nobody', 'Data_Manager', ['Nowhere Institute']),
            ],
          },
        ],
      })
      .expect(400);
    expect(await affiliationOf('ref')).toBeNull();
  });
});
