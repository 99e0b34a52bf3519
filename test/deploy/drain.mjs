// Imports survive drains (issue 35, item 4), as lines of `npm run test:deploy`: a 2 GiB import is
// stopped at about half by SIGTERM (a node drain) and by SIGKILL (a lost node), on the storage
// volume and on S3 (the machine's Swift), in the compose stack on the working tree's image. Each
// line reports how far the copy was, how much of what was staged was copied again (the next
// attempt keeps what the stopped one recorded), and that the dataset was published and
// registered in the catalog once.
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  createArgs,
  inspect,
  podman,
  ROOT,
  waitHealthy,
} from '../../scripts/deploy/podman-stack.mjs';

const GiB = 2 ** 30;
/** 256 random files of 8 MiB: a stop lands between and inside them. */
const FILES = 256;
const FILE_MIB = 8;
const TOTAL = FILES * FILE_MIB * 2 ** 20;
const SUBMISSION = 'ELX_LU_SUB-1';
const PROJECT = 'PD-OMICS';
const raw = `projects/${PROJECT}/${SUBMISSION}/data/raw`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A TCP relay: listens on argv[1] (any port, printed), forwards to argv[2]:argv[3]. */
const RELAY = `
  const net = require('net');
  const [host, toHost, toPort] = process.argv.slice(1);
  const server = net.createServer((socket) => {
    const upstream = net.connect(Number(toPort), toHost);
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  server.listen(0, host, () => console.log(server.address().port));
`;
const gib = (bytes) => `${(bytes / GiB).toFixed(2)} GiB`;

/**
 * Every drain check. `deploy` gives what deploy.mjs has: its `check`, the running compose stack
 * (working tree's image), the HTTP client, the set of services killed on purpose, the env-file
 * directory, and its helpers (`psql`, `volumePath`).
 */
export async function drainChecks({ check, stack, client, killed, envDir, psql, volumePath }) {
  const ids = ['DRAIN-FS-TERM', 'DRAIN-FS-KILL', 'DRAIN-S3-TERM', 'DRAIN-S3-KILL'];
  let ready = false;
  await check(`drain: ${ids.length} datasets of ${gib(TOTAL)} in the drop zone`, async () => {
    const t0 = Date.now();
    addLinkedDatasets(stack, ids);
    // A file changed less than 2 s before its copy is not recorded for reuse.
    await sleep(2500);
    ready = true;
    return `${FILES} files of ${FILE_MIB} MiB, written in ${((Date.now() - t0) / 1000).toFixed(0)} s`;
  });
  if (!ready) return;
  const storage = () => volumePath(stack, 'storage');
  const workers = new DrainWorkers(stack, envDir);
  const once = async (id, location) => {
    const record = await client.waitImported(id, 600_000);
    const records = (await client.imports()).items.filter((r) => r.id === id);
    const transfers = psql(stack, `SELECT count(*) FROM transfers WHERE import_id = '${id}'`);
    const locations = psql(
      stack,
      `SELECT count(*) FROM storage_locations WHERE location = '${location(record.path)}'`,
    );
    if (records.length !== 1 || transfers !== '1' || locations !== '1')
      throw new Error(
        `${id}: ${records.length} records, ${transfers} transfers, ${locations} storage rows`,
      );
    return record;
  };

  // ---- filesystem ------------------------------------------------------------------------------
  const fsProbe = {
    staged: () => stagedBytes(join(storage(), '.staging')),
    provenance: (record) =>
      JSON.parse(
        readFileSync(join(storage(), record.path, '.provisioner/provenance.json'), 'utf8'),
      ),
    published: (record) => readdirSync(join(storage(), raw)).filter((n) => n === record.key).length,
  };
  const fsLocation = (path) => path;
  workers.stopComposeWorker();
  try {
    await check('drain: SIGTERM at half of a 2 GiB import, filesystem', async () => {
      const first = await workers.start('drain-fs-a');
      const { id } = await client.importDataset('DRAIN-FS-TERM');
      await waitCopied(client, id, () => fsProbe.staged());
      const drain = await sigterm(first);
      const after = (await client.importRecord(id)).state;
      const staged = fsProbe.staged();
      if (drain.exitCode !== 0 || after !== 'queued')
        throw new Error(`exit ${drain.exitCode}, import ${after} after the drain`);
      workers.startComposeWorker();
      const record = await once(id, fsLocation);
      return figures({
        drain,
        staged,
        record,
        provenance: fsProbe.provenance(record),
        once: fsProbe.published(record),
      });
    });
    await check('drain: SIGKILL at half of a 2 GiB import, filesystem', async () => {
      workers.startComposeWorker();
      const { id } = await client.importDataset('DRAIN-FS-KILL');
      await waitCopied(client, id, () => fsProbe.staged());
      process.kill(workers.composeWorkerPid(), 'SIGKILL');
      killed.add('provisioner-worker');
      const staged = fsProbe.staged();
      // The restart policy brings it back; it resumes once the dead worker's lock lapses.
      const record = await once(id, fsLocation);
      return figures({
        staged,
        record,
        provenance: fsProbe.provenance(record),
        once: fsProbe.published(record),
      });
    });
  } finally {
    workers.removeAll();
  }

  // ---- S3 (the machine's Swift, through a relay the pod can reach) ----------------------------
  const s3 = await S3Target.open(envDir);
  try {
    const s3Probe = {
      staged: (record) => s3.stagedBytes(`${s3.prefix}${record.path}/`),
      provenance: (record) => s3.json(`${s3.prefix}${record.path}/.provisioner/provenance.json`),
      published: async (record) =>
        (await s3.keys(`${s3.prefix}${raw}/`)).filter(
          (k) => k === `${s3.prefix}${record.path}/.provisioner/provenance.json`,
        ).length,
    };
    const s3Location = (path) => `s3://${s3.bucket}/${s3.prefix}${path}`;
    workers.stopComposeWorker();
    await check('drain: SIGTERM at half of a 2 GiB import, S3 (Swift)', async () => {
      const first = await workers.start('drain-s3-a', [s3.envFile]);
      const { id } = await client.importDataset('DRAIN-S3-TERM');
      // The import's own progress: the server's listings may lag behind what it holds.
      const record0 = await waitCopied(client, id);
      const drain = await sigterm(first);
      const after = (await client.importRecord(id)).state;
      const staged = await s3Probe.staged(record0);
      if (drain.exitCode !== 0 || after !== 'queued')
        throw new Error(`exit ${drain.exitCode}, import ${after} after the drain`);
      await workers.start('drain-s3-b', [s3.envFile]);
      const record = await once(id, s3Location);
      return figures({
        drain,
        staged,
        record,
        provenance: await s3Probe.provenance(record),
        once: await s3Probe.published(record),
      });
    });
    await check('drain: SIGKILL at half of a 2 GiB import, S3 (Swift)', async () => {
      const { id } = await client.importDataset('DRAIN-S3-KILL');
      const record0 = await waitCopied(client, id);
      const worker = workers.get('drain-s3-b');
      process.kill(workers.pid(worker), 'SIGKILL');
      const staged = await s3Probe.staged(record0);
      await workers.start('drain-s3-c', [s3.envFile]);
      const record = await once(id, s3Location);
      return figures({
        staged,
        record,
        provenance: await s3Probe.provenance(record),
        once: await s3Probe.published(record),
      });
    });
  } finally {
    workers.removeAll();
    workers.startComposeWorker();
    try {
      s3.removeBucket(stack);
    } finally {
      await s3.close();
    }
  }
}

/** The datasets, in the demo submission: the first one's files written, the others hard links. */
function addLinkedDatasets(stack, ids) {
  const script = `
    const fs = require('fs'), path = require('path'), crypto = require('crypto');
    const root = '/data/dropzone', ids = ${JSON.stringify(ids)};
    const demo = path.join(root, 'datasets', 'ELX-DS-0002');
    const meta = JSON.parse(fs.readFileSync(path.join(demo, 'dataset.json'), 'utf8'));
    const manifest = [];
    const first = path.join(root, 'datasets', ids[0], 'payload');
    fs.mkdirSync(first, { recursive: true });
    for (let n = 0; n < ${FILES}; n++) {
      const b = crypto.randomBytes(${FILE_MIB} << 20), name = 'part-' + String(n).padStart(3, '0') + '.bin';
      fs.writeFileSync(path.join(first, name), b);
      manifest.push(crypto.createHash('sha256').update(b).digest('hex') + '  ' + name);
    }
    for (const id of ids) {
      const dir = path.join(root, 'datasets', id);
      fs.mkdirSync(path.join(dir, 'payload'), { recursive: true });
      if (id !== ids[0])
        for (const name of fs.readdirSync(first)) fs.linkSync(path.join(first, name), path.join(dir, 'payload', name));
      fs.writeFileSync(path.join(dir, 'manifest-sha256.txt'), manifest.join('\\n') + '\\n');
      fs.writeFileSync(path.join(dir, 'dataset.json'), JSON.stringify({ ...meta, dataset_id: id, title: 'Drain test ' + id }));
    }
    const subFile = path.join(root, 'submissions', meta.submission, 'submission.json');
    const sub = JSON.parse(fs.readFileSync(subFile, 'utf8'));
    sub.datasets = [...sub.datasets, ...ids];
    fs.writeFileSync(subFile, JSON.stringify(sub));
    for (const id of ids) fs.writeFileSync(path.join(root, 'datasets', id, '.ready'), '');
  `;
  stack.run(['node', '-e', script], { volumes: [`${stack.volume('dropzone')}:/data/dropzone`] });
}

/**
 * Waits until about half the import is staged: by `staged()` (the storage volume, read at once)
 * or by the import's progress (reported every 0.5 s).
 */
async function waitCopied(client, id, staged) {
  const deadline = Date.now() + 900_000;
  for (;;) {
    const record = await client.importRecord(id);
    if (record.state === 'imported') throw new Error('the import finished before the stop');
    const done = staged ? staged() : record.progress.bytes_done;
    if (done >= TOTAL / 2) return record;
    if (Date.now() > deadline) throw new Error(`import ${id}: ${done} bytes staged after 15 min`);
    await sleep(staged ? 20 : 200);
  }
}

/**
 * SIGTERM as the kubelet sends it, with the process held still meanwhile so the drain starts at
 * the point measured: resolves with the exit code and the time from signal to exit.
 */
async function sigterm(worker) {
  const pid = worker.pid;
  process.kill(pid, 'SIGSTOP');
  const t0 = Date.now();
  process.kill(pid, 'SIGTERM');
  process.kill(pid, 'SIGCONT');
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      break;
    }
    if (Date.now() - t0 > 130_000) throw new Error('the worker did not exit within 130 s');
    await sleep(20);
  }
  const drainMs = Date.now() - t0;
  for (let i = 0; i < 100 && inspect(worker.container).status === 'running'; i++) await sleep(50);
  return { exitCode: inspect(worker.container).exitCode, drainMs };
}

function figures({ drain, staged, record, provenance, once }) {
  const kept = provenance.import.kept_from_earlier_attempts;
  if (once !== 1) throw new Error(`${record.key} published ${once} times`);
  if (provenance.totals.bytes !== TOTAL)
    throw new Error(`${record.key}: ${provenance.totals.bytes} bytes`);
  return [
    `at ${Math.round((100 * staged) / TOTAL)} %`,
    ...(drain ? [`exit ${drain.exitCode} after ${(drain.drainMs / 1000).toFixed(1)} s`] : []),
    `${gib(staged - kept.bytes)} copied again (${kept.files} files kept)`,
    `attempt ${record.attempts}`,
    'published once, registered once',
  ].join(', ');
}

/** Bytes under the staging directory of a storage volume (partial files included). */
function stagedBytes(dir) {
  if (!existsSync(dir)) return 0;
  let total = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (entry.isFile() && !entry.name.endsWith('.jsonl'))
      total += statSync(join(entry.parentPath, entry.name)).size;
  return total;
}

/**
 * Worker containers of the drain checks, beside the compose file's own (stopped meanwhile, so
 * only the worker under test takes the import): the same service, with no restart policy (a
 * drained worker stays gone, as a pod on a drained node), a health port of its own and extra env
 * files (S3).
 */
class DrainWorkers {
  constructor(stack, envDir) {
    this.stack = stack;
    this.envDir = envDir;
    this.names = [];
  }

  stopComposeWorker() {
    podman(['stop', '--time', '130', this.stack.container('provisioner-worker')], {
      allowFail: true,
    });
  }

  startComposeWorker() {
    if (inspect(this.stack.container('provisioner-worker')).status !== 'running')
      podman(['start', this.stack.container('provisioner-worker')]);
  }

  composeWorkerPid() {
    return this.pid({ container: this.stack.container('provisioner-worker') });
  }

  pid(worker) {
    return Number(podman(['inspect', '--format', '{{.State.Pid}}', worker.container]).stdout);
  }

  get(name) {
    return { container: this.stack.container(name) };
  }

  async start(name, envFiles = []) {
    const base = this.stack.services['provisioner-worker'];
    const port = String(3003 + this.names.length);
    const service = {
      ...base,
      restart: 'no',
      env_file: [...base.env_file, ...envFiles],
      environment: { ...base.environment, WORKER_HEALTH_PORT: port },
      healthcheck: {
        ...base.healthcheck,
        test: [
          'CMD',
          'node',
          '-e',
          `fetch('http://127.0.0.1:${port}/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))`,
        ],
      },
    };
    podman(createArgs(this.stack.project, name, service));
    this.names.push(name);
    const container = this.stack.container(name);
    podman(['start', container]);
    try {
      await waitHealthy(container, service.healthcheck, 120_000);
    } catch (error) {
      const ready = podman(
        [
          'exec',
          container,
          'node',
          '-e',
          `fetch('http://127.0.0.1:${port}/health/ready').then((r) => r.text()).then(console.log, console.log)`,
        ],
        { allowFail: true },
      );
      throw new Error(`${name} not ready: ${ready.stdout || ready.stderr}\n${error.message}`);
    }
    return { container, pid: this.pid({ container }) };
  }

  removeAll() {
    for (const name of this.names.splice(0))
      podman(['rm', '--force', '--time', '5', this.stack.container(name)], { allowFail: true });
  }
}

/**
 * A bucket of the machine's Swift for the S3 checks, reached from the pod through a TCP relay on
 * the podman bridge's gateway (Swift listens on the host's loopback only); its env file for the
 * workers. Swift is started when it does not answer (as the jest global setup does).
 */
class S3Target {
  static async open(envDir) {
    const target = new S3Target();
    await target.init(envDir);
    return target;
  }

  async init(envDir) {
    const port = Number(process.env.S3_SERVER_PORT ?? 9380);
    this.endpoint = process.env.S3_TEST_ENDPOINT ?? `http://127.0.0.1:${port}`;
    if (!process.env.S3_TEST_ENDPOINT) {
      // Registered as one of the shared server's users: only the last user to leave stops it.
      this.user = `drain-${process.pid}`;
      execFileSync('bash', [join(ROOT, 'scripts/s3/swift-s3-server.sh'), 'start', this.user, String(process.pid)], {
        stdio: 'inherit',
        timeout: 240_000,
      });
    }
    const credentials = {
      accessKeyId: process.env.S3_TEST_ACCESS_KEY_ID ?? 'test:tester',
      secretAccessKey: process.env.S3_TEST_SECRET_ACCESS_KEY ?? 'testing',
    };
    this.client = new S3Client({
      endpoint: this.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials,
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });
    this.bucket = `rds-drain-${process.pid}`;
    this.prefix = 'drain/';
    await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
    const gateway =
      podman(['network', 'inspect', '--format', '{{range .Subnets}}{{.Gateway}}{{end}}', 'podman'])
        .stdout || '10.88.0.1';
    // A process of its own: this one blocks in synchronous podman calls (health checks, one-off
    // containers), during which an in-process relay would stall the workers' S3 requests.
    const upstream = new URL(this.endpoint);
    this.relay = spawn(process.execPath, ['-e', RELAY, gateway, upstream.hostname, upstream.port], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const relayPort = await new Promise((done, fail) => {
      this.relay.stdout.once('data', (chunk) => done(Number(String(chunk).trim())));
      this.relay.once('exit', (code) => fail(new Error(`the S3 relay exited (${code})`)));
    });
    this.envFile = join(envDir, 'provisioner-drain-s3.env');
    writeFileSync(
      this.envFile,
      [
        'STORAGE_BACKEND=s3',
        `S3_ENDPOINT=http://${gateway}:${relayPort}`,
        'S3_REGION=us-east-1',
        `S3_BUCKET=${this.bucket}`,
        `S3_PREFIX=${this.prefix}`,
        'S3_FORCE_PATH_STYLE=true',
        `S3_ACCESS_KEY_ID=${credentials.accessKeyId}`,
        `S3_SECRET_ACCESS_KEY=${credentials.secretAccessKey}`,
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
  }

  async keys(prefix) {
    const keys = [];
    let token;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) keys.push(o.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys;
  }

  /** Objects under `prefix` and the parts of its open uploads. */
  async stagedBytes(prefix) {
    let total = 0;
    let token;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) total += o.Size ?? 0;
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    const uploads = await this.client.send(
      new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: prefix }),
    );
    for (const u of uploads.Uploads ?? []) {
      const parts = await this.client.send(
        new ListPartsCommand({ Bucket: this.bucket, Key: u.Key, UploadId: u.UploadId }),
      );
      for (const p of parts.Parts ?? []) total += p.Size ?? 0;
    }
    return total;
  }

  async json(key) {
    const answer = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    return JSON.parse(await answer.Body.transformToString());
  }

  /**
   * Empties and removes the bucket from the app image, with the provisioner's own S3 client and
   * bucket (Swift wants a Content-MD5 on DeleteObjects, which that client sends).
   */
  removeBucket(stack) {
    const src = 'dist/apps/provisioner/apps/provisioner/src';
    const script = `
      const { createS3Client } = require('./${src}/common/s3/s3-client');
      const { S3Bucket } = require('./${src}/storage/s3/s3-bucket');
      const { ListObjectsV2Command, DeleteObjectsCommand, DeleteBucketCommand } = require('@aws-sdk/client-s3');
      const e = process.env, Bucket = e.S3_BUCKET;
      const client = createS3Client({ endpoint: e.S3_ENDPOINT, region: e.S3_REGION, forcePathStyle: true,
        credentials: { accessKeyId: e.S3_ACCESS_KEY_ID, secretAccessKey: e.S3_SECRET_ACCESS_KEY } });
      (async () => {
        await new S3Bucket(client, { bucket: Bucket, prefix: '', partBytes: 5 << 20, uploadConcurrency: 1 }).abortUploadsUnder('');
        for (;;) {
          const page = await client.send(new ListObjectsV2Command({ Bucket }));
          const Objects = (page.Contents || []).map((o) => ({ Key: o.Key }));
          if (Objects.length === 0) break;
          await client.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects, Quiet: true } }));
        }
        await client.send(new DeleteBucketCommand({ Bucket }));
      })().catch((error) => { console.error(error); process.exit(1); });
    `;
    stack.run(['node', '-e', script], { envFiles: [this.envFile] });
  }

  async close() {
    this.relay?.kill();
    this.client?.destroy();
    if (this.user)
      execFileSync('bash', [join(ROOT, 'scripts/s3/swift-s3-server.sh'), 'release', this.user], {
        stdio: 'inherit',
      });
    rmSync(this.envFile ?? '/nonexistent', { force: true });
  }
}
