import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DataSource } from 'typeorm';
import { createCatalogDatabase } from '../../../test/support/databases';
import { PROCESS_START_MS } from '../../../test/support/timeouts';
import { buildTypeOrmOptions } from '../src/typeorm-options';
import { loadDemoCatalog } from './demo-catalog.fixture';
import { runCli } from '../src/cli/run-cli';
import { DAISY_JSON_DIR } from './catalog-writes.fixture';

const REPO_ROOT = join(__dirname, '../../..');

interface Ran {
  code: number;
  out: string;
  err: string;
  json: Record<string, unknown>;
}

describe('npm run catalog: the command-line tool', () => {
  let databaseUrl: string;
  let db: DataSource;
  let dir: string;

  beforeAll(async () => {
    databaseUrl = await createCatalogDatabase();
    db = new DataSource(buildTypeOrmOptions({ DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: 2 }));
    await db.initialize();
    await loadDemoCatalog(databaseUrl);
    dir = mkdtempSync(join(tmpdir(), 'catalog-cli-'));
  });
  afterAll(() => db.destroy());

  /** Runs a command in this process, through the same entry the script uses. */
  async function cli(...argv: string[]): Promise<Ran> {
    let out = '';
    let err = '';
    const code = await runCli(
      argv,
      { DATABASE_URL: databaseUrl, CATALOG_CLI_USER: 'tester' },
      { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`), cwd: dir },
    );
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(out) as Record<string, unknown>;
    } catch {
      // help text
    }
    return { code, out, err, json };
  }

  const file = (name: string, content: unknown) => {
    writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));
    return name;
  };
  const count = async (sql: string) => Number((await db.query<{ n: string }[]>(sql))[0].n);

  it('--help lists every command; <command> --help its arguments; unknown commands exit 1', async () => {
    const all = await cli('--help');
    expect(all.code).toBe(0);
    for (const name of [
      'import',
      'create-user',
      'rotate-key',
      'create-endpoint',
      'expose',
      'withdraw',
      'grant',
      'revoke',
      'publish',
      'unpublish',
      'load-vocabulary',
      'audit',
      'permissions',
    ]) {
      expect(all.out).toContain(`  ${name} `);
    }
    const one = await cli('expose', '--help');
    expect(one.out).toContain('--dataset ACCESSION --endpoint NAME --form-id N');
    expect((await cli('explode')).code).toBe(1);
  });

  it('import: detects the kind, prints the counts, records the CLI user as author', async () => {
    const ran = await cli(
      'import',
      file('partners.json', { items: [{ name: 'CLI Partner', country_code: 'FR' }] }),
    );
    expect(ran).toMatchObject({
      code: 0,
      json: { kind: 'partners', status: 'Success', created: 1, updated: 0 },
    });
    const [entry] = await db.query<{ actor_kind: string; actor_name: string }[]>(
      `SELECT actor_kind, actor_name FROM audit_log WHERE object_type = 'partner' ORDER BY id DESC LIMIT 1`,
    );
    expect(entry).toEqual({ actor_kind: 'cli', actor_name: 'tester' });
  });

  it('import: a reference document read in place, with --kind', async () => {
    const ran = await cli(
      'import',
      join(DAISY_JSON_DIR, 'demo/partners.json'),
      '--kind',
      'partners',
    );
    expect(ran.json).toMatchObject({ created: 2, updated: 0 });
  });

  it('import: bad input exits 1 with every problem listed and nothing written', async () => {
    const before = await count('SELECT count(*) AS n FROM partners');
    const bad = await cli(
      'import',
      file('bad.json', { items: [{ name: 'A', is_clinical: 'no' }, { name: 'A' }] }),
      '--kind',
      'partners',
    );
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('item 0 is_clinical: must be true or false, not a string');
    expect(bad.err).toContain('item 1 name: duplicates item 0 of this document');
    expect(await count('SELECT count(*) AS n FROM partners')).toBe(before);
    expect((await cli('import', file('broken.json', '{"items": ['))).code).toBe(1);
    expect((await cli('import', 'missing.json')).code).toBe(1);
    const unknown = await cli('import', file('odd.json', { items: [{ foo: 1 }] }));
    expect(unknown).toMatchObject({ code: 1 });
    expect(unknown.err).toContain('pass --kind');
    expect((await cli('import', 'partners.json', '--kind', 'planets')).code).toBe(1);
    // The routes' JSON limits: a nest past MAX_JSON_DEPTH is refused before it is parsed.
    const deep = await cli(
      'import',
      file('deep.json', `{"items":[{"name":${'['.repeat(10_000)}${']'.repeat(10_000)}}]}`),
      '--kind',
      'partners',
    );
    expect(deep).toMatchObject({ code: 1, err: 'deep.json is nested deeper than 64 levels\n' });
  });

  it('import and load-vocabulary: a file that is not UTF-8 exits 1 naming it and its line, nothing written', async () => {
    const before = await count('SELECT count(*) AS n FROM partners');
    const latin1 = (name: string, text: string) => {
      writeFileSync(join(dir, name), Buffer.from(text, 'latin1'));
      return name;
    };
    const partners = await cli(
      'import',
      latin1('latin1.json', '{"items": [\n{"name": "Université"}]}'),
      '--kind',
      'partners',
    );
    expect(partners.code).toBe(1);
    expect(partners.err).toContain('latin1.json: is not valid UTF-8 (line 2');
    expect(await count('SELECT count(*) AS n FROM partners')).toBe(before);
    const vocabulary = await cli(
      'load-vocabulary',
      'phenotype',
      latin1('latin1.tsv', 'HP:1\tfirst\nHP:2\tfièvre\n'),
      '--format',
      'tsv',
    );
    expect(vocabulary.code).toBe(1);
    expect(vocabulary.err).toContain('latin1.tsv: is not valid UTF-8 (line 2');
  });

  it('create-user, rotate-key and update-user', async () => {
    const created = await cli(
      'create-user',
      '--username',
      'cli.user',
      '--first-name',
      'Cli',
      '--last-name',
      'User',
      '--email',
      'cli@example.org',
      '--groups',
      'auditor',
    );
    expect(created.code).toBe(0);
    expect(created.json).toMatchObject({
      username: 'cli.user',
      groups: ['auditor'],
      api_key: expect.stringMatching(/^[A-Za-z0-9]{48}$/),
    });
    const rotated = await cli('rotate-key', 'cli.user');
    expect(rotated.code).toBe(0);
    expect(rotated.json.api_key).not.toBe(created.json.api_key);
    const deactivated = await cli('update-user', 'cli.user', '--active', 'false');
    expect(deactivated.json).toMatchObject({ is_active: false });
    const missing = await cli('create-user', '--username', 'x');
    expect(missing).toMatchObject({ code: 1 });
    expect(missing.err).toContain('--first-name is required');
    const typo = await cli('rotate-key', 'cli.user', '--forse');
    expect(typo.err).toContain('unknown option --forse');
    expect((await cli('rotate-key', 'nobody')).code).toBe(1);
  });

  it('create-endpoint, expose, withdraw', async () => {
    const endpoint = await cli(
      'create-endpoint',
      '--name',
      'CLI Catalog',
      '--url-pattern',
      'https://cli.example/${entity_id}',
    );
    expect(endpoint.code).toBe(0);
    expect(String(endpoint.json.api_key)).toHaveLength(64);
    const [{ elu_accession: dataset }] = await db.query<{ elu_accession: string }[]>(
      `SELECT elu_accession FROM datasets WHERE title = 'EPIC-DREM methylation'`,
    );
    const exposed = await cli(
      'expose',
      '--dataset',
      dataset,
      '--endpoint',
      'CLI Catalog',
      '--form-id',
      '4',
      '--request-pdf',
    );
    expect(exposed.json).toMatchObject({
      dataset,
      endpoint: 'CLI Catalog',
      form_id: 4,
      request_pdf_enabled: true,
    });
    const again = await cli(
      'expose',
      '--dataset',
      dataset,
      '--endpoint',
      'CLI Catalog',
      '--form-id',
      '4',
    );
    expect(again.code).toBe(1);
    expect(again.err).toContain('already has an active exposure');
    const badForm = await cli(
      'expose',
      '--dataset',
      dataset,
      '--endpoint',
      'CLI Catalog',
      '--form-id',
      'four',
    );
    expect(badForm.err).toContain('form_id: must be an integer');
    const withdrawn = await cli('withdraw', String(exposed.json.id), '--reason', 'Retracted');
    expect(withdrawn.json).toMatchObject({ deprecated: true, deprecation_notes: 'Retracted' });
  });

  it('grant and revoke', async () => {
    const granted = await cli(
      'grant',
      '--user',
      'roy.blue',
      '--object-type',
      'project',
      '--object',
      'EPIC-DREM',
    );
    expect(granted.json).toMatchObject({ user: 'roy.blue', object_type: 'project' });
    expect(
      await count(
        `SELECT count(*) AS n FROM permission_grants g JOIN users u ON u.id = g.user_id WHERE u.username = 'roy.blue'`,
      ),
    ).toBe(1);
    const revoked = await cli(
      'revoke',
      '--user',
      'roy.blue',
      '--object-type',
      'project',
      '--object',
      'EPIC-DREM',
    );
    expect(revoked.json).toEqual({ status: 'Success', revoked: 1 });
    expect(
      (
        await cli(
          'revoke',
          '--user',
          'roy.blue',
          '--object-type',
          'project',
          '--object',
          'EPIC-DREM',
        )
      ).code,
    ).toBe(1);
  });

  it('permissions explain: the global key’s explanation, from the shell', async () => {
    // roy.blue in the demo catalog, given one access the explanation lists and one it does not.
    await db.query(
      `INSERT INTO accesses (dataset_id, user_id, status, grant_expires_on, access_notes)
       SELECT d.id, u.id, 'active', (now() AT TIME ZONE 'UTC')::date + o.days, 'cli test'
       FROM users u, datasets d, (VALUES ('PD-OMICS blood transcriptomics', 0),
         ('EPIC-DREM sequencing data', -1)) AS o(title, days)
       WHERE u.username = 'roy.blue' AND d.title = o.title`,
    );
    const [{ elu_accession: expired }] = await db.query<{ elu_accession: string }[]>(
      `SELECT elu_accession FROM datasets WHERE title = 'EPIC-DREM sequencing data'`,
    );
    const ran = await cli('permissions', 'explain', 'demo-oidc-roy-blue');
    expect(ran.code).toBe(0);
    expect(ran.json).toMatchObject({ subject: 'demo-oidc-roy-blue' });
    expect(ran.json.not_listed).toContainEqual({
      accession: expired,
      title: 'EPIC-DREM sequencing data',
      reason: 'expired',
    });
    expect((await cli('permissions', 'explain', 'nobody')).code).toBe(1);
    expect((await cli('permissions', 'explain')).err).toContain('<subject> is required');
    expect((await cli('permissions', 'list', 'demo-oidc-roy-blue')).code).toBe(1);
  });

  it('publish and unpublish', async () => {
    const published = await cli('publish', 'partner', 'ELU_I_1939');
    expect(published.json).toMatchObject({ external_id: 'ELU_I_1939', is_published: true });
    const unpublished = await cli('unpublish', 'partner', 'ELU_I_1939');
    expect(unpublished.json).toMatchObject({ is_published: false });
    expect((await cli('publish', 'planet', '1')).code).toBe(1);
  });

  it('load-vocabulary', async () => {
    const loaded = await cli(
      'load-vocabulary',
      'phenotype',
      file('hp.obo', 'format-version: 1.2\n\n[Term]\nid: HP:9999999\nname: cli test phenotype\n'),
    );
    expect(loaded.json).toMatchObject({ category: 'phenotype', format: 'obo', inserted: 1 });
    expect(
      (await cli('load-vocabulary', 'phenotype', file('bad.tsv', 'no tabs\n'), '--format', 'tsv'))
        .code,
    ).toBe(1);
  });

  it('audit shows what the commands did, filtered', async () => {
    const ran = await cli('audit', '--object', 'exposure');
    // The demo catalog's exposures were made through the same service, audited as its own.
    const actions = (ran.json.results as { action: string; actor: { name: string | null } }[])
      .filter((e) => e.actor.name !== 'demo-data')
      .map((e) => e.action);
    expect(actions).toEqual(['withdraw', 'expose']);
    expect((await cli('audit', '--since', 'last week')).code).toBe(1);
  });

  describe('as a process (npm run catalog)', () => {
    const run = async (args: string[], env: Record<string, string>) => {
      try {
        const { stdout, stderr } = await promisify(execFile)(
          'npm',
          ['run', '-s', 'catalog', '--', ...args],
          {
            cwd: REPO_ROOT,
            env: { ...process.env, ...env },
          },
        );
        return { code: 0, stdout, stderr };
      } catch (error) {
        const e = error as { code: number; stdout: string; stderr: string };
        return { code: e.code, stdout: e.stdout, stderr: e.stderr };
      }
    };

    it('exits 2 when the database cannot be reached', async () => {
      const ran = await run(['audit'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nothing' });
      expect(ran.code).toBe(2);
      expect(ran.stderr).toContain('cannot reach the database');
      // One tool process booted through ts-node (60 s timed out at load 22).
    }, PROCESS_START_MS);

    it('imports a file and exits 0; bad input exits 1', async () => {
      const ok = await run(['import', join(dir, 'partners.json')], { DATABASE_URL: databaseUrl });
      expect(ok.code).toBe(0);
      expect(JSON.parse(ok.stdout)).toMatchObject({ kind: 'partners', updated: 1 });
      const bad = await run(['import', join(dir, 'bad.json'), '--kind', 'partners'], {
        DATABASE_URL: databaseUrl,
      });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('item 1 name: duplicates item 0');
      // Two of them, one after the other.
    }, 2 * PROCESS_START_MS);
  });
});
