import {
  existsSync,
  linkSync,
  mkdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import request from 'supertest';
import {
  ProvisionerTestApps,
  queueEnv,
  startProvisionerApps,
  TEST_READ_KEY,
  TEST_WRITE_KEY,
} from '../../../test/support/provisioner-app';
import { IMPORTS_QUEUE } from '../src/imports/import.queue';
import type { ImportRecord } from '../src/imports/import-record';
import {
  DropzoneFixture,
  makeSpecialFile,
  tempDir,
  writeDatasetDirectory,
} from './support/dropzone-fixture';
import { FakeDss } from './support/fake-dss';
import { dropzoneEnv, everyFileText, waitForImport } from './support/provisioner-e2e';

jest.setTimeout(30_000);

const SECRET = 'SECRET-the-keys-file-0123456789';
const METADATA_MAX = 2048;
const MANIFEST_MAX = 4096;
/** Datasets one submission.json may name here (SUB-B names 18). */
const MAX_DATASETS = 20;

interface DiffItem {
  dataset_id: string;
  submission: string;
  ready: boolean;
  reason: string | null;
  reason_detail: string | null;
}

/**
 * A drop zone written by hostile depositors (issue 14, items 1-5): links, special files and
 * oversized files where metadata belongs, a dataset directory linked to another submission's,
 * a dataset claimed by a submission it does not name, and a project name that is no path.
 */
describe('provisioner over a hostile drop zone', () => {
  let apps: ProvisionerTestApps;
  let dropzone: DropzoneFixture;
  let storageRoot: string;
  let secretFile: string;
  const http = () => request(apps.api.getHttpServer());
  const get = (path: string) => http().get(path).set('X-API-Key', TEST_READ_KEY);
  const post = (path: string, body: object) =>
    http().post(path).set('X-API-Key', TEST_WRITE_KEY).send(body);
  const importDataset = (id: string) => post('/datasets/dropzone/import', { dataset_id: id });
  const queue = () => apps.api.get<Queue>(getQueueToken(IMPORTS_QUEUE));
  const dir = (id: string) => dropzone.datasetDir(id);
  const good = (id: string, submission: string) =>
    dropzone.dataset(id, { submission, files: { 'a.txt': `data of ${id}\n` } });

  async function diffOf(submission: string): Promise<Record<string, DiffItem>> {
    const res = await get(`/datasets/dropzone/diff?submission=${submission}`);
    expect(res.status).toBe(200);
    return Object.fromEntries((res.body.items as DiffItem[]).map((d) => [d.dataset_id, d]));
  }

  beforeAll(async () => {
    const base = tempDir('hostile');
    dropzone = new DropzoneFixture(join(base, 'dropzone'));
    storageRoot = join(base, 'storage');
    secretFile = join(base, 'keys.json');
    writeFileSync(secretFile, JSON.stringify({ dataset_id: 'x', title: SECRET, api_key: SECRET }));

    dropzone.submission('SUB-A', {
      project: 'PA',
      datasets: ['DS-A1', 'DS-A2', 'DS-A3', 'DS-A4', 'DS-A5'],
    });
    for (const id of ['DS-A1', 'DS-A2', 'DS-A3', 'DS-A4', 'DS-A5']) good(id, 'SUB-A');
    const bIds = [
      'DS-LINKED-DIR',
      'DS-A2',
      'DS-NAMES-A',
      'DS-NO-META',
      'DS-META-LINK',
      'DS-META-CHAIN',
      'DS-META-DANGLING',
      'DS-META-HARDLINK',
      'DS-META-FIFO',
      'DS-META-SOCKET',
      'DS-META-DIR',
      'DS-META-HUGE',
      'DS-MANIFEST-LINK',
      'DS-MANIFEST-FIFO',
      'DS-MANIFEST-HUGE',
      'DS-MARKER-LINK',
      'DS-MARKER-FIFO',
      'DS-PAYLOAD-LINK',
    ];
    dropzone.submission('SUB-B', { project: 'PB', datasets: bIds });
    for (const id of bIds) if (id !== 'DS-A2' && id !== 'DS-LINKED-DIR') good(id, 'SUB-B');
    // A dataset directory that is a link to another submission's dataset.
    symlinkSync(dir('DS-A1'), dir('DS-LINKED-DIR'));
    // Named by A's dataset.json, but A does not list it.
    writeFileSync(
      join(dir('DS-NAMES-A'), 'dataset.json'),
      JSON.stringify({ dataset_id: 'DS-NAMES-A', submission: 'SUB-A' }),
    );
    rmSync(join(dir('DS-NO-META'), 'dataset.json'));
    const replace = (id: string, name: string, make: (path: string) => void) => {
      rmSync(join(dir(id), name), { recursive: true, force: true });
      make(join(dir(id), name));
    };
    replace('DS-META-LINK', 'dataset.json', (p) => symlinkSync(secretFile, p));
    replace('DS-META-CHAIN', 'dataset.json', (p) => {
      symlinkSync(secretFile, `${p}.hop`);
      symlinkSync(`${p}.hop`, p);
    });
    replace('DS-META-DANGLING', 'dataset.json', (p) => symlinkSync('/nonexistent/x.json', p));
    replace('DS-META-HARDLINK', 'dataset.json', (p) => linkSync(secretFile, p));
    replace('DS-META-FIFO', 'dataset.json', (p) => makeSpecialFile(p, 'fifo'));
    replace('DS-META-SOCKET', 'dataset.json', (p) => makeSpecialFile(p, 'socket'));
    replace('DS-META-DIR', 'dataset.json', (p) => mkdirSync(p));
    replace('DS-META-HUGE', 'dataset.json', (p) =>
      writeFileSync(p, JSON.stringify({ submission: 'SUB-B', pad: 'x'.repeat(METADATA_MAX) })),
    );
    replace('DS-MANIFEST-LINK', 'manifest-sha256.txt', (p) =>
      symlinkSync(join(dir('DS-A1'), 'manifest-sha256.txt'), p),
    );
    replace('DS-MANIFEST-FIFO', 'manifest-sha256.txt', (p) => makeSpecialFile(p, 'fifo'));
    replace('DS-MANIFEST-HUGE', 'manifest-sha256.txt', (p) =>
      writeFileSync(p, `${'0'.repeat(64)}  a.txt\n`.repeat(MANIFEST_MAX / 50)),
    );
    replace('DS-MARKER-LINK', '.ready', (p) => symlinkSync('/etc/hostname', p));
    replace('DS-MARKER-FIFO', '.ready', (p) => makeSpecialFile(p, 'fifo'));
    replace('DS-PAYLOAD-LINK', 'payload', (p) => symlinkSync(join(dir('DS-A1'), 'payload'), p));

    // A submission directory that is a link; a submission.json that is a link.
    mkdirSync(join(base, 'elsewhere/SUB-LINKDIR'), { recursive: true });
    writeFileSync(
      join(base, 'elsewhere/SUB-LINKDIR/submission.json'),
      JSON.stringify({ ref: 'SUB-LINKDIR', status: 'completed', project: 'PX', datasets: [] }),
    );
    symlinkSync(
      join(base, 'elsewhere/SUB-LINKDIR'),
      join(dropzone.root, 'submissions/SUB-LINKDIR'),
    );
    mkdirSync(join(dropzone.root, 'submissions/SUB-LINKDOC'));
    symlinkSync(
      join(base, 'elsewhere/SUB-LINKDIR/submission.json'),
      join(dropzone.root, 'submissions/SUB-LINKDOC/submission.json'),
    );
    // Project names that are not one path segment.
    dropzone.submission('SUB-ESCAPE', { project: '../../escape', datasets: ['DS-ESCAPE'] });
    good('DS-ESCAPE', 'SUB-ESCAPE');
    dropzone.submission('SUB-SLASH', { project: 'a/b', datasets: ['DS-SLASH'] });
    good('DS-SLASH', 'SUB-SLASH');

    // Submissions whose submission.json is refused, each with a delivered dataset naming it:
    // nested past 64 levels, naming more datasets than allowed, describing another folder.
    const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    dropzone.submission('SUB-DEEP', { project: 'PD', datasets: ['DS-DEEP'] });
    writeFileSync(
      join(dropzone.root, 'submissions/SUB-DEEP/submission.json'),
      `{"ref":"SUB-DEEP","status":"completed","project":"PD","datasets":["DS-DEEP"],"x":${deep(70)}}`,
    );
    good('DS-DEEP', 'SUB-DEEP');
    const many = Array.from({ length: MAX_DATASETS + 1 }, (_, i) => `DS-MANY-${i}`);
    dropzone.submission('SUB-MANY', { project: 'PM', datasets: many });
    good('DS-MANY-0', 'SUB-MANY');
    dropzone.submission('SUB-FOREIGN', { project: 'PF', datasets: ['DS-FOREIGN'] });
    writeFileSync(
      join(dropzone.root, 'submissions/SUB-FOREIGN/submission.json'),
      JSON.stringify({
        ref: 'SUB-OTHER',
        status: 'completed',
        project: 'PF',
        datasets: ['DS-FOREIGN'],
      }),
    );
    good('DS-FOREIGN', 'SUB-FOREIGN');

    apps = await startProvisionerApps(
      await dropzoneEnv(dropzone, storageRoot, {
        SOURCE_METADATA_MAX_BYTES: String(METADATA_MAX),
        SOURCE_MANIFEST_MAX_BYTES: String(MANIFEST_MAX),
        SOURCE_SUBMISSION_MAX_DATASETS: String(MAX_DATASETS),
      }),
    );
  });

  afterAll(async () => {
    await apps?.close();
  });

  it('lists linked, special and oversized metadata as not ready with the reason, never following or blocking', async () => {
    const diff = await diffOf('SUB-B');
    const refused = (id: string) => diff[id];
    expect(refused('DS-LINKED-DIR')).toMatchObject({
      ready: false,
      reason: 'metadata_refused',
      reason_detail: 'the directory is a symbolic link, not a directory',
    });
    const expectations: [string, string][] = [
      ['DS-META-LINK', 'dataset.json is a symbolic link, not a regular file'],
      ['DS-META-CHAIN', 'dataset.json is a symbolic link, not a regular file'],
      ['DS-META-DANGLING', 'dataset.json is a symbolic link, not a regular file'],
      ['DS-META-HARDLINK', 'dataset.json has 2 hard links'],
      ['DS-META-FIFO', 'dataset.json is a FIFO (named pipe), not a regular file'],
      ['DS-META-SOCKET', 'dataset.json is a socket, not a regular file'],
      ['DS-META-DIR', 'dataset.json is a directory, not a regular file'],
      ['DS-META-HUGE', `over the limit of ${METADATA_MAX} (SOURCE_METADATA_MAX_BYTES)`],
      ['DS-MANIFEST-LINK', 'manifest-sha256.txt is a symbolic link'],
      ['DS-MANIFEST-FIFO', 'manifest-sha256.txt is a FIFO (named pipe)'],
      ['DS-MANIFEST-HUGE', `over the limit of ${MANIFEST_MAX} (SOURCE_MANIFEST_MAX_BYTES)`],
      ['DS-MARKER-LINK', '.ready is a symbolic link'],
      ['DS-MARKER-FIFO', '.ready is a FIFO (named pipe)'],
      ['DS-PAYLOAD-LINK', 'payload is a symbolic link, not a directory'],
    ];
    for (const [id, detail] of expectations) {
      expect({ id, ...refused(id) }).toMatchObject({
        id,
        ready: false,
        reason: 'metadata_refused',
      });
      expect({ id, detail: refused(id).reason_detail }).toEqual({
        id,
        detail: expect.stringContaining(detail),
      });
    }
    const all = JSON.stringify((await get('/datasets/dropzone')).body);
    expect(all).not.toContain(SECRET);
  });

  it('refuses every one of them on POST with 409 and the reason, and queues nothing', async () => {
    for (const id of [
      'DS-LINKED-DIR',
      'DS-META-LINK',
      'DS-META-FIFO',
      'DS-MANIFEST-FIFO',
      'DS-MANIFEST-HUGE',
      'DS-PAYLOAD-LINK',
    ]) {
      const res = await importDataset(id);
      expect({ id, status: res.status, reason: res.body.more?.reason }).toEqual({
        id,
        status: 409,
        reason: 'metadata_refused',
      });
    }
    expect(await queue().getJob('dropzone-dataset-DS-META-LINK')).toBeUndefined();
    expect(everyFileText(storageRoot)).not.toContain(SECRET);
  });

  it('never lets a dataset be imported into a submission its dataset.json does not name', async () => {
    const b = await diffOf('SUB-B');
    expect(b['DS-A2']).toMatchObject({
      ready: false,
      reason: 'metadata_invalid',
      reason_detail: 'dataset.json names submission "SUB-A", not SUB-B which lists the dataset',
    });
    expect(b['DS-NAMES-A']).toMatchObject({ ready: false, reason: 'metadata_invalid' });
    expect(b['DS-NO-META']).toMatchObject({
      ready: false,
      reason: 'metadata_invalid',
      reason_detail: 'dataset.json is missing: it must name its submission (SUB-B)',
    });
    expect((await diffOf('SUB-A'))['DS-A2']).toMatchObject({ ready: true });

    // DS-NAMES-A: its dataset.json names SUB-A, which does not list it; SUB-B does.
    const named = await importDataset('DS-NAMES-A');
    expect(named.status).toBe(409);
    expect(named.body.more).toMatchObject({ reason: 'metadata_invalid' });
    // DS-A2 is listed by both: it goes to the submission its dataset.json names, A.
    const res = await importDataset('DS-A2');
    expect(res.status).toBe(202);
    const record = await waitForImport(apps.api, res.body.id);
    expect(record).toMatchObject({ state: 'imported', path: 'projects/PA/SUB-A/data/raw/DS-A2' });
    expect(existsSync(join(storageRoot, 'projects/PB'))).toBe(false);
  });

  it('leaves out submissions whose directory or document is a link, and refuses their import with the reason', async () => {
    const refs = (await get('/submissions/dropzone')).body.items.map((s: { ref: string }) => s.ref);
    expect(refs).not.toContain('SUB-LINKDIR');
    expect(refs).not.toContain('SUB-LINKDOC');
    for (const [ref, detail] of [
      ['SUB-LINKDIR', 'the directory is a symbolic link'],
      ['SUB-LINKDOC', 'submission.json is a symbolic link'],
    ]) {
      const res = await post('/submissions/dropzone/import', { submission: ref });
      expect({ ref, status: res.status }).toEqual({ ref, status: 409 });
      expect(res.body).toMatchObject({ status: 'Error', more: { reason: 'metadata_refused' } });
      expect(res.body.description).toContain(detail);
      // Nothing was imported from it: its record is unknown, not an error.
      expect((await get(`/imports/dropzone-submission-${ref}`)).status).toBe(404);
    }
  });

  it.each([
    ['SUB-DEEP', 'DS-DEEP', 'submission.json is nested deeper than 64 levels'],
    [
      'SUB-MANY',
      'DS-MANY-0',
      `names ${MAX_DATASETS + 1} datasets, over the limit of ${MAX_DATASETS}`,
    ],
    ['SUB-FOREIGN', 'DS-FOREIGN', 'names submission "SUB-OTHER", not SUB-FOREIGN (its folder)'],
  ])(
    'says why on every route naming %s or its dataset %s: 409 metadata_refused, nothing queued',
    async (ref, dataset, detail) => {
      const refs = (await get('/submissions/dropzone')).body.items.map(
        (s: { ref: string }) => s.ref,
      );
      expect(refs).not.toContain(ref);
      const answers = {
        'POST /submissions/import': await post('/submissions/dropzone/import', { submission: ref }),
        'GET /datasets?submission': await get(`/datasets/dropzone?submission=${ref}`),
        'GET /datasets/diff?submission': await get(`/datasets/dropzone/diff?submission=${ref}`),
        'POST /datasets/import': await importDataset(dataset),
      };
      for (const [route, res] of Object.entries(answers))
        expect({ route, status: res.status, body: res.body }).toMatchObject({
          route,
          status: 409,
          body: {
            status: 'Error',
            description: expect.stringContaining(detail),
            more: {
              reason: 'metadata_refused',
              problems: [expect.objectContaining({ path: `submissions/${ref}/submission.json` })],
            },
          },
        });
      expect(await queue().getJob(`dropzone-dataset-${dataset}`)).toBeUndefined();
      expect(await queue().getJob(`dropzone-submission-${ref}`)).toBeUndefined();
    },
  );

  it.each([
    ['SUB-ESCAPE', '../../escape', 'DS-ESCAPE'],
    ['SUB-SLASH', 'a/b', 'DS-SLASH'],
  ])(
    'refuses %s (project %j) with 409 unsafe_project, never a 500, nothing queued or written',
    async (ref, _project, id) => {
      const dataset = await importDataset(id);
      expect(dataset.status).toBe(409);
      expect(dataset.body).toMatchObject({ status: 'Error', more: { reason: 'unsafe_project' } });
      const submission = await post('/submissions/dropzone/import', { submission: ref });
      expect(submission.status).toBe(409);
      expect(submission.body.more).toMatchObject({ reason: 'unsafe_project' });
      expect((await get(`/imports/dropzone-dataset-${id}`)).status).toBe(404);
      expect((await get(`/imports/dropzone-submission-${ref}`)).status).toBe(404);
      expect((await get(`/datasets/dropzone?submission=${ref}`)).body.items[0]).toMatchObject({
        path: null,
      });
      expect(await queue().getJob(`dropzone-dataset-${id}`)).toBeUndefined();
      expect(existsSync(join(storageRoot, '../escape'))).toBe(false);
      expect(existsSync(join(storageRoot, 'projects/a'))).toBe(false);
    },
  );

  describe('a dataset made hostile after its import was queued', () => {
    /** Queues an import with the workers paused, spoils the dataset, then lets the worker run. */
    async function spoilWhileQueued(id: string, spoil: () => void): Promise<ImportRecord> {
      await queue().pause();
      try {
        const res = await importDataset(id);
        expect(res.status).toBe(202);
        spoil();
      } finally {
        await queue().resume();
      }
      return waitForImport(apps.api, `dropzone-dataset-${id}`);
    }

    it('is rejected, not retried, with every refused file listed, when dataset.json became a link', async () => {
      const record = await spoilWhileQueued('DS-A3', () => {
        rmSync(join(dir('DS-A3'), 'dataset.json'));
        symlinkSync(secretFile, join(dir('DS-A3'), 'dataset.json'));
        rmSync(join(dir('DS-A3'), '.ready'));
        makeSpecialFile(join(dir('DS-A3'), '.ready'), 'fifo');
      });
      expect(record).toMatchObject({
        state: 'rejected',
        attempts: 1,
        error: { code: 'metadata_refused' },
      });
      expect(
        (record.error!.details as { code: string; path: string }[])
          .map((d) => `${d.code}:${d.path}`)
          .sort(),
      ).toEqual(['fifo:.ready', 'symlink:dataset.json']);
      expect(everyFileText(storageRoot)).not.toContain(SECRET);
    });

    it('is rejected, without hanging the worker, when a manifest became a FIFO', async () => {
      const record = await spoilWhileQueued('DS-A4', () => {
        rmSync(join(dir('DS-A4'), 'manifest-sha256.txt'));
        makeSpecialFile(join(dir('DS-A4'), 'manifest-sha256.txt'), 'fifo');
      });
      expect(record).toMatchObject({
        state: 'rejected',
        attempts: 1,
        error: { code: 'metadata_refused' },
      });
      expect(record.error!.details).toEqual([
        expect.objectContaining({ code: 'fifo', path: 'manifest-sha256.txt' }),
      ]);
    });

    it('is rejected when its directory was swapped for a link to another dataset', async () => {
      const record = await spoilWhileQueued('DS-A5', () => {
        renameSync(dir('DS-A5'), `${dir('DS-A5')}.moved`);
        symlinkSync(dir('DS-A1'), dir('DS-A5'));
      });
      expect(record).toMatchObject({ state: 'rejected', error: { code: 'metadata_refused' } });
      expect(existsSync(join(storageRoot, 'projects/PA/SUB-A/data/raw/DS-A5'))).toBe(false);
    });

    it('is rejected as metadata_refused, once, when its submission.json became nested too deep', async () => {
      dropzone.submission('SUB-LATE-DEEP', { project: 'PL', datasets: ['DS-LATE-DEEP'] });
      good('DS-LATE-DEEP', 'SUB-LATE-DEEP');
      const record = await spoilWhileQueued('DS-LATE-DEEP', () => {
        writeFileSync(
          join(dropzone.root, 'submissions/SUB-LATE-DEEP/submission.json'),
          `{"ref":"SUB-LATE-DEEP","status":"completed","project":"PL","datasets":["DS-LATE-DEEP"],"x":${'['.repeat(65)}${']'.repeat(65)}}`,
        );
      });
      expect(record).toMatchObject({
        state: 'rejected',
        attempts: 1,
        error: {
          code: 'metadata_refused',
          message: expect.stringContaining('nested deeper than 64'),
        },
      });
    });

    it('is rejected as unsafe_project, once, when its submission renamed its project to a path', async () => {
      dropzone.submission('SUB-LATER', { project: 'PL', datasets: ['DS-LATER'] });
      good('DS-LATER', 'SUB-LATER');
      const record = await spoilWhileQueued('DS-LATER', () => {
        dropzone.submission('SUB-LATER', { project: '../../../tmp', datasets: ['DS-LATER'] });
      });
      expect(record).toMatchObject({
        state: 'rejected',
        attempts: 1,
        error: { code: 'unsafe_project' },
      });
    });
  });
});

/**
 * The same rules where a dss source reads the landing zone (issue 14, item 1): the submission
 * system says which submission a dataset belongs to, but the landing-zone directory is written
 * by whoever uploads the data.
 */
describe('provisioner over a hostile dss landing zone', () => {
  let apps: ProvisionerTestApps;
  let dss: FakeDss;
  const get = (path: string) =>
    request(apps.api.getHttpServer()).get(path).set('X-API-Key', TEST_READ_KEY);

  beforeAll(async () => {
    const base = tempDir('hostile-dss');
    const landing = join(base, 'landing');
    const write = (id: string) =>
      writeDatasetDirectory(join(landing, id), { submission: 'SUB', files: { 'a.txt': id } });
    for (const id of ['D-OK', 'D-FIFO', 'D-MARKER']) write(id);
    symlinkSync(join(landing, 'D-OK'), join(landing, 'D-LINK'));
    rmSync(join(landing, 'D-FIFO/manifest-sha256.txt'));
    makeSpecialFile(join(landing, 'D-FIFO/manifest-sha256.txt'), 'fifo');
    rmSync(join(landing, 'D-MARKER/.ready'));
    symlinkSync('/etc/hostname', join(landing, 'D-MARKER/.ready'));
    dss = new FakeDss('paged', 'dss-key', [
      {
        id: 1,
        ref_name: 'ELX_LU_SUB-1',
        status_code: 'completed',
        local_project_name: 'PRJ',
        datasets: ['D-OK', 'D-LINK', 'D-FIFO', 'D-MARKER'].map((id) => ({
          dataset_id: id,
          title: id,
        })),
      },
    ]);
    apps = await startProvisionerApps({
      ...(await queueEnv()),
      SOURCES: JSON.stringify([
        {
          name: 'dss',
          type: 'dss',
          url: await dss.start(),
          api_key: 'dss-key',
          landing_zone: landing,
        },
      ]),
      STORAGE_ROOT: join(base, 'storage'),
    });
  });

  afterAll(async () => {
    await apps?.close();
    await dss?.stop();
  });

  it('refuses a linked dataset directory, a FIFO manifest and a linked marker, and imports nothing of them', async () => {
    const diff = await get('/datasets/dss/diff');
    expect(diff.status).toBe(200);
    const reasons = Object.fromEntries(
      (diff.body.items as DiffItem[]).map((d) => [d.dataset_id, `${d.ready}:${d.reason}`]),
    );
    expect(reasons).toEqual({
      'D-OK': 'true:null',
      'D-LINK': 'false:metadata_refused',
      'D-FIFO': 'false:metadata_refused',
      'D-MARKER': 'false:metadata_refused',
    });
    for (const id of ['D-LINK', 'D-FIFO', 'D-MARKER']) {
      const res = await request(apps.api.getHttpServer())
        .post('/datasets/dss/import')
        .set('X-API-Key', TEST_WRITE_KEY)
        .send({ dataset_id: id });
      expect({ id, status: res.status, reason: res.body.more?.reason }).toEqual({
        id,
        status: 409,
        reason: 'metadata_refused',
      });
    }
  });
});
