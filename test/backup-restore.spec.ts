import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { createCatalogDatabase, createEmptyDatabase } from './support/databases';

/**
 * deploy/backup/backup.sh and restore.sh on the real PostgreSQL of the tests: a migrated catalog
 * with rows, and a storage tree (a read-only published dataset with its provenance, a staging
 * area), backed up, then restored into a new database and an empty folder, and compared.
 */

const ROOT = join(__dirname, '..');
const run = promisify(execFile);

async function query<T>(url: string, sql: string): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Every file and folder under `dir`: its path, mode and (files) SHA-256. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (path: string) => {
    for (const name of readdirSync(path)) {
      const full = join(path, name);
      const stat = statSync(full);
      const key = relative(dir, full);
      out[key] = `${(stat.mode & 0o777).toString(8)} ${
        stat.isDirectory() ? 'dir' : createHash('sha256').update(readFileSync(full)).digest('hex')
      }`;
      if (stat.isDirectory()) walk(full);
    }
  };
  walk(dir);
  return out;
}

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'backup-restore-'));
});
afterAll(() => {
  // Published trees are read-only: make them writable to remove them.
  if (work) {
    void run('chmod', ['-R', 'u+w', work]).finally(() =>
      rmSync(work, { recursive: true, force: true }),
    );
  }
});

it('backs up the catalog database and storage, and restores them into new ones exactly, without staging', async () => {
  const catalog = await createCatalogDatabase();
  const tables = await query<{ table_name: string }>(
    catalog,
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
  );
  expect(tables.length).toBeGreaterThan(5);
  await query(
    catalog,
    "CREATE TABLE backup_probe (id int primary key, note text); INSERT INTO backup_probe SELECT g, 'row ' || g FROM generate_series(1, 500) g",
  );

  const storage = join(work, 'storage');
  const dataset = join(storage, 'projects/P1/S1/data/raw/DS1');
  mkdirSync(join(dataset, '.provisioner'), { recursive: true });
  writeFileSync(join(dataset, 'reads.fastq'), 'ACGT\n'.repeat(1000));
  writeFileSync(
    join(dataset, '.provisioner/provenance.json'),
    '{"format":"provisioner-provenance/1"}',
  );
  mkdirSync(join(storage, '.staging/import-7'), { recursive: true });
  writeFileSync(join(storage, '.staging/import-7/partial.bin'), 'half');
  chmodSync(join(dataset, 'reads.fastq'), 0o444);
  chmodSync(join(dataset, '.provisioner/provenance.json'), 0o444);
  chmodSync(join(dataset, '.provisioner'), 0o555);
  chmodSync(dataset, 0o555);
  const before = tree(storage);

  const backup = join(work, 'backup');
  await run(join(ROOT, 'deploy/backup/backup.sh'), [backup], {
    env: { ...process.env, CATALOG_DATABASE_URL: catalog, STORAGE_ROOT: storage },
  });
  expect(readdirSync(backup).sort()).toEqual(['SHA256SUMS', 'catalog.dump', 'storage.tar']);

  const restoredDb = await createEmptyDatabase('restored');
  const restoredStorage = join(work, 'restored-storage');
  await run(join(ROOT, 'deploy/backup/restore.sh'), [backup], {
    env: { ...process.env, CATALOG_DATABASE_URL: restoredDb, STORAGE_ROOT: restoredStorage },
  });
  const rows = (url: string) =>
    query<{ n: string; digest: string }>(
      url,
      "SELECT count(*) AS n, md5(string_agg(id || note, ',' ORDER BY id)) AS digest FROM backup_probe",
    );
  expect(await rows(restoredDb)).toEqual(await rows(catalog));
  const migrations = (url: string) => query(url, 'SELECT name FROM migrations ORDER BY id');
  expect(await migrations(restoredDb)).toEqual(await migrations(catalog));
  const withoutStaging = Object.fromEntries(
    Object.entries(before).filter(([path]) => !path.startsWith('.staging')),
  );
  expect(tree(restoredStorage)).toEqual(withoutStaging);

  // Never over data: a second restore into the now non-empty database is refused.
  const again = await run(join(ROOT, 'deploy/backup/restore.sh'), [backup], {
    env: { ...process.env, CATALOG_DATABASE_URL: restoredDb, STORAGE_ROOT: join(work, 'other') },
  }).then(
    () => 'restored',
    (error: { stderr: string }) => error.stderr,
  );
  expect(again).toMatch(/the catalog database is not empty/);
}, 120_000);
