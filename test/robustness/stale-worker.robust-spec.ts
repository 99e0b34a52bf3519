import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { generateApiKey, hashApiKey } from '@app/auth';
import { DemoCatalog, startDemoCatalog } from '../../apps/catalog-api/test/demo-catalog.fixture';
import { tempDir } from '../../apps/provisioner/test/support/dropzone-fixture';
import type { ImportRecord } from '../../apps/provisioner/src/imports/import-record';
import { QueueBackendChoice, queueEnv } from '../support/provisioner-app';
import { poll } from '../support/wait';
import { ProvisionerRig, startRig, WorkerProcess, writeDatasets } from './support/provisioner-rig';

/** Long enough to copy that the freeze lands mid-copy (a sparse file: cheap to write). */
const BIG = 768 * 1024 * 1024;
const REGISTRATION_KEY = generateApiKey(48);
const WAIT_MS = 150_000;

/**
 * A worker frozen mid-copy (SIGSTOP: a paused VM, a stopped container, a long GC) past its
 * lock, while another worker takes the import over, publishes it and registers it in the
 * catalog; then woken (SIGCONT). Its attempt is over: it must stop without writing anything on
 * the record, which stays imported and registered. Before, its failure handler rewrote the
 * job's data from its stale copy and the record's `catalog: registered` became null.
 */
describe.each<QueueBackendChoice>(['redis', 'postgres'])(
  'a worker frozen past its lock, then woken, on the %s backend',
  (backend) => {
    let catalog: DemoCatalog;
    let rig: ProvisionerRig;
    const base = tempDir(`robust-stale-${backend}`);

    beforeAll(async () => {
      catalog = await startDemoCatalog({
        REGISTRATION_API_KEY_SHA256: hashApiKey(REGISTRATION_KEY),
        DCAT_PUBLISHER_NAME: 'Luxembourg Centre for Systems Biomedicine',
      });
      await catalog.app.listen(0, '127.0.0.1');
      const port = (catalog.app.getHttpServer().address() as AddressInfo).port;
      rig = await startRig({
        ...(await queueEnv(backend)),
        SOURCES: JSON.stringify([
          { name: 'dropzone', type: 'dropzone', root: join(base, 'dropzone') },
        ]),
        STORAGE_ROOT: join(base, 'storage'),
        // A frozen worker's claim lapses after 2 s, so the import is taken over quickly.
        IMPORT_LOCK_MS: '2000',
        CATALOG_URL: `http://127.0.0.1:${port}`,
        CATALOG_API_KEY: REGISTRATION_KEY,
        CATALOG_RETRY_DELAY_MS: '100',
      });
    });

    afterAll(async () => {
      await rig?.close();
      await catalog?.close();
      rmSync(base, { recursive: true, force: true });
    });

    it('leaves the record imported and registered: the stale attempt writes nothing', async () => {
      // The demo catalog's project, so that the registration lands.
      const [id] = writeDatasets(join(base, 'dropzone'), 1, BIG, 'PD-OMICS');
      const stale: WorkerProcess = await rig.startWorker({ LOG_LEVEL: 'info' });
      const { status, record } = await rig.importDataset(id);
      expect(status).toBe(202);
      await poll(
        async () => {
          const now = await rig.record(record.id);
          if (now?.state === 'imported') throw new Error('the copy finished before the freeze');
          return now?.state === 'running' && now.progress.bytes_done > 0 ? now : undefined;
        },
        'the copy to be under way',
        60_000,
        20,
      );
      stale.child.kill('SIGSTOP');
      let registered: ImportRecord;
      try {
        await rig.startWorker();
        registered = await poll(
          async () => {
            const now = await rig.record(record.id);
            return now?.catalog?.state === 'registered' ? now : undefined;
          },
          'another worker to import and register it',
          WAIT_MS,
          100,
        );
      } finally {
        stale.child.kill('SIGCONT');
      }
      expect(registered).toMatchObject({ state: 'imported', error: null });
      // The woken worker's attempt ends (its lock is gone) and says so.
      await poll(
        () => (/after losing its lock/.test(stale.output()) ? true : undefined),
        'the woken worker to end its attempt',
        WAIT_MS,
        100,
      );
      expect(stale.child.exitCode).toBeNull();
      const after = await rig.record(record.id);
      expect(after).toEqual(registered);
      expect(after!.catalog).toEqual({
        state: 'registered',
        accession: expect.stringMatching(/^ELU_I_\d+$/),
        error: null,
      });
    });
  },
);
