// The recovery runbook (docs/operations.md, "Backup and recovery") on the deployed compose stack,
// with its imports and the demo's grants: deploy/backup/backup.sh, the stack destroyed (its
// database, queue and storage volumes; the drop zone is the depositors' source, not the stack's),
// deploy/backup/restore.sh and the queue's snapshot into new ones, the apps started on them,
// `provisioner reregister`; then every table, import record, stored file and registration is
// compared with what was there, and imports after the restore still happen once.
//
// backup.sh and restore.sh run in a one-off container of the stack's PostgreSQL image (its
// pg_dump matches the server), in the pod, with the volumes mounted; no image holds both pg_dump
// and redis-cli, so the queue's snapshot is taken with the stack's own Redis's redis-cli, as the
// runbook says for compose.
import assert from 'node:assert/strict';
import { appendFileSync, chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addDataset } from './fixtures.mjs';
import { podman, ROOT, Stack } from '../../scripts/deploy/podman-stack.mjs';

/**
 * Each public table's row count and digest, one line each. The rendered dataset exports (a cache
 * the catalog renders again) are left out.
 */
function tableDigests(psql) {
  const tables = psql(
    "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'dataset_exports' ORDER BY 1",
  )
    .split('\n')
    .filter(Boolean);
  const sql = tables
    .map(
      (t) =>
        `SELECT '${t}' || ' ' || count(*) || ' ' || coalesce(md5(string_agg(x::text, '|' ORDER BY x::text)), '-') FROM "${t}" x`,
    )
    .join(' UNION ALL ');
  return Object.fromEntries(
    psql(sql)
      .split('\n')
      .map((l) => l.split(' '))
      .map(([t, n, d]) => [t, `${n} ${d}`]),
  );
}

/** The catalog's data version (catalog_version, bumped by triggers on every write). */
const dataVersion = (psql) => psql('SELECT version FROM catalog_version');

/** Stored files and their digests, staging left out (backup.sh leaves it out: partial copies). */
const storedFiles = (digests, dir) =>
  Object.fromEntries(
    Object.entries(digests(dir)).filter(([path]) => !path.startsWith('.staging/')),
  );

/** The import records as GET /imports lists them: id, state, registration, accession. */
async function importRecords(client) {
  return (await client.imports()).items
    .map((r) => `${r.id} ${r.state} ${r.catalog?.state ?? '-'} ${r.catalog?.accession ?? '-'}`)
    .sort();
}

export async function backupRestoreChecks({
  check,
  stack,
  client,
  envDir,
  keys,
  postgresImage,
  psql,
  volumePath,
  digests,
  waitReady,
}) {
  const work = mkdtempSync(join(tmpdir(), 'rds-backup-'));
  const backup = join(work, 'set');
  const databaseUrl = `postgres://catalog:${keys.POSTGRES_PASSWORD}@127.0.0.1:5432/catalog`;
  // A one-off container of the PostgreSQL image in the pod, as root (tar keeps the files' owners),
  // running one of the backup scripts with the backup folder and the storage volume mounted.
  const script = (s, target, storageMode) =>
    podman([
      'run',
      '--rm',
      '--pod',
      stack.project,
      '--user',
      '0',
      '--entrypoint',
      'bash',
      '--volume',
      `${join(ROOT, 'deploy/backup')}:/scripts:ro`,
      '--volume',
      `${work}:/backup`,
      '--volume',
      `${target.volume('storage')}:/data/storage:${storageMode}`,
      '--env',
      `CATALOG_DATABASE_URL=${databaseUrl}`,
      '--env',
      'STORAGE_ROOT=/data/storage',
      postgresImage,
      `/scripts/${s}`,
      '/backup/set',
    ]);
  let before;
  let restored = stack;
  try {
    await check('backup: catalog, queue, storage (backup.sh, redis-cli --rdb)', async () => {
      before = {
        tables: tableDigests(psql),
        version: dataVersion(psql),
        imports: await importRecords(client),
        files: storedFiles(digests, volumePath(stack, 'storage')),
      };
      script('backup.sh', stack, 'ro');
      // The queue's snapshot, by the Redis server itself, into the same folder and its sums.
      podman(['exec', stack.container('redis'), 'redis-cli', '--rdb', '/tmp/queue.rdb']);
      podman(['cp', `${stack.container('redis')}:/tmp/queue.rdb`, join(backup, 'queue.rdb')]);
      podman(['exec', stack.container('redis'), 'rm', '-f', '/tmp/queue.rdb']);
      const sum = createHash('sha256')
        .update(readFileSync(join(backup, 'queue.rdb')))
        .digest('hex');
      appendFileSync(join(backup, 'SHA256SUMS'), `${sum}  queue.rdb\n`);
      const grants = before.tables.permission_grants?.split(' ')[0] ?? '?';
      return `${Object.keys(before.tables).length} tables (${grants} grants), ${before.imports.length} import records, ${Object.keys(before.files).length} files`;
    });
    if (!before) return stack;

    await check('restore: stack destroyed, restored into new volumes', async () => {
      stack.down();
      for (const v of ['postgres-data', 'redis-data', 'storage'])
        podman(['volume', 'rm', '--force', stack.volume(v)]);
      restored = new Stack({ project: stack.project, env: stack.env, publish: stack.publish });
      await restored.up({ only: ['postgres'] });
      // Healthy is pg_isready on the socket, which the image's first-start initialisation also
      // answers; restore.sh connects over TCP, which only the final server accepts.
      const deadline = Date.now() + 60_000;
      const tcp = () =>
        podman(
          ['exec', restored.container('postgres'), 'pg_isready', '-h', '127.0.0.1', '-p', '5432'],
          { allowFail: true },
        ).status === 0;
      while (!tcp()) {
        if (Date.now() > deadline) throw new Error('the new database does not accept TCP');
        await new Promise((r) => setTimeout(r, 500));
      }
      script('restore.sh', restored, 'rw');
      // The queue: an empty Redis loads the snapshot (appendonly off for that start), writes its
      // append-only file from it (CONFIG SET appendonly yes), and stops; the stack's Redis then
      // starts on that file, as the runbook's step 4.
      chmodSync(work, 0o755);
      chmodSync(join(backup, 'queue.rdb'), 0o644);
      const keysLoaded = podman([
        'run',
        '--rm',
        '--user',
        '0',
        '--network',
        'none',
        '--entrypoint',
        'sh',
        '--volume',
        `${restored.volume('redis-data')}:/data`,
        '--volume',
        `${backup}:/backup:ro`,
        restored.services.redis.image,
        '-c',
        [
          'cp /backup/queue.rdb /data/dump.rdb',
          "redis-server --dir /data --port 6390 --appendonly no --save '' --daemonize yes",
          'until redis-cli -p 6390 ping 2>/dev/null | grep -q PONG; do sleep 0.2; done',
          'redis-cli -p 6390 config set appendonly yes > /dev/null',
          'until redis-cli -p 6390 info persistence | grep -q "aof_rewrite_in_progress:0" && redis-cli -p 6390 info persistence | grep -q "aof_rewrite_scheduled:0"; do sleep 0.2; done',
          'redis-cli -p 6390 info persistence | grep -q "aof_last_bgrewrite_status:ok"',
          'redis-cli -p 6390 dbsize',
          '(redis-cli -p 6390 shutdown || true)',
          'while redis-cli -p 6390 ping > /dev/null 2>&1; do sleep 0.2; done',
          'rm -f /data/dump.rdb',
          'chown -R redis:redis /data',
        ].join(' && '),
      ]).stdout;
      await restored.up();
      await waitReady();
      return `database, storage and ${keysLoaded.trim()} queue keys restored; apps up`;
    });

    await check('restore: every table, import record, file as before', async () => {
      const after = {
        tables: tableDigests(psql),
        imports: await importRecords(client),
        files: storedFiles(digests, volumePath(restored, 'storage')),
      };
      // The catalog's data version is bumped by triggers as pg_restore loads the tables: it may
      // only have grown (a cache keyed on it is never served an older version).
      const grew = Number(dataVersion(psql)) >= Number(before.version);
      assert.ok(grew, `catalog_version went back from ${before.version}`);
      const changed = Object.keys(before.tables).filter(
        (t) => t !== 'catalog_version' && before.tables[t] !== after.tables[t],
      );
      assert.deepEqual(
        changed,
        [],
        `tables changed: ${changed.map((t) => `${t} ${before.tables[t]} -> ${after.tables[t]}`).join(', ')}`,
      );
      assert.deepEqual(after.imports, before.imports, 'import records changed');
      assert.deepEqual(after.files, before.files, 'stored files changed');
      return `${Object.keys(after.tables).length - 1} tables, ${after.imports.length} import records, ${Object.keys(after.files).length} files equal; data version ${before.version} -> ${dataVersion(psql)}`;
    });

    await check('restore: reregister finds every dataset registered', async () => {
      const { stdout } = restored.run(
        [
          'node',
          'dist/apps/provisioner/apps/provisioner/src/provisioner.cli.js',
          'reregister',
          '--json',
        ],
        {
          envFiles: [join(envDir, 'provisioner.env')],
          volumes: [`${restored.volume('storage')}:/data/storage:ro`],
        },
      );
      const { reregister } = JSON.parse(stdout.trim().split('\n').pop());
      assert.ok(reregister.datasets > 0, 'no published dataset found');
      assert.deepEqual(
        { ...reregister, datasets: 0 },
        {
          datasets: 0,
          added: 0,
          unchanged: reregister.datasets,
          refused: 0,
          unavailable: 0,
          no_provenance: 0,
          would_register: 0,
          records_queued: 0,
        },
        stdout,
      );
      return `${reregister.datasets} datasets, each already registered, no record queued`;
    });

    await check('restore: imports after it happen once', async () => {
      const again = await client.importDataset('ELX-DS-0002');
      assert.equal(again.state, 'imported', `ELX-DS-0002 again: ${again.state}`);
      addDataset((a, o) => restored.run(a, o), restored.volume('dropzone'), 'ELX-DS-0103', 1);
      const record = await client.waitImported((await client.importDataset('ELX-DS-0103')).id);
      const keysOf = (await client.imports()).items.map((r) => r.key);
      const twice = keysOf.filter((k, i) => keysOf.indexOf(k) !== i);
      assert.deepEqual(twice, [], 'an import recorded twice');
      assert.equal(keysOf.length, before.imports.length + 1);
      const transfers = psql(
        'SELECT count(*) FROM (SELECT import_id FROM transfers WHERE import_id IS NOT NULL GROUP BY import_id HAVING count(*) > 1) d',
      );
      assert.equal(transfers, '0', 'an import registered twice');
      return `ELX-DS-0002 already imported; ELX-DS-0103 imported and registered once (${record.catalog.accession})`;
    });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return restored;
}
