import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import {
  queueEnv,
  startProvisionerApps,
  type ProvisionerTestApps,
} from '../../../test/support/provisioner-app';
import type { ImportRecord } from '../src/imports/import-record';
import { digest, DropzoneFixture, tempDir } from './support/dropzone-fixture';
import { running } from './support/process-state';
import { makeHtsFixtures } from './support/hts-fixtures';
import { startDatasetImport, waitForImport } from './support/provisioner-e2e';
import { until } from '../../../test/support/wait';

jest.setTimeout(90_000);

const HTS_VALIDATOR = resolve(__dirname, '../validators/hts-files/validate.mjs');
/** The hanging validator's time limit: the test waits for this, plus the import around it. */
const HANG_LIMIT_MS = 1500;

/**
 * Validators before publication (issue 60, item 3), to the GDI validator contract
 * (GenomicDataInfrastructure/validation-framework, validator-specification.md: input.json in,
 * result.json out), each source with validators of its own in SOURCES: a validator that passes,
 * fails (its messages in the import record), crashes, hangs past its time limit, runs out of
 * memory, writes garbage or too much, or changes the staged files; and our hts-files validator
 * (samtools, bcftools) on real BAM and VCF files.
 */
describe('validators before publication', () => {
  const base = tempDir('validators');
  const storage = join(base, 'storage');
  const scripts = join(base, 'validators');
  const seen = join(base, 'seen');
  let apps: ProvisionerTestApps;

  /** A validator script; `{input}` and `{output}` are its first two arguments. */
  const script = (name: string, body: string, shell = '/bin/sh'): string => {
    const path = join(scripts, `${name}.sh`);
    writeFileSync(path, `#!${shell}\n${body}\n`);
    chmodSync(path, 0o755);
    return path;
  };
  const source = (name: string, validator: Record<string, unknown>) => ({
    name,
    type: 'dropzone',
    root: join(base, 'dropzones', name),
    validators: [
      { name, command: [validator.script, '{input}', '{output}'], ...validator, script: undefined },
    ],
  });
  /** One submission in the source's drop zone, with the datasets given. */
  const deposit = (name: string, datasets: Record<string, Record<string, string | Buffer>>) => {
    const fixture = new DropzoneFixture(join(base, 'dropzones', name)).submission(`SUB-${name}`, {
      project: 'PRJV',
      datasets: Object.keys(datasets),
    });
    for (const [id, files] of Object.entries(datasets))
      fixture.dataset(id, { submission: `SUB-${name}`, files });
  };
  const published = (name: string, id: string) =>
    join(storage, 'projects/PRJV', `SUB-${name}`, 'data/raw', id);
  const importOf = async (name: string, id: string): Promise<ImportRecord> =>
    waitForImport(
      apps.api,
      await startDatasetImport(apps.api, name, id),
      undefined,
      25_000 + HANG_LIMIT_MS,
    );

  const result = (verdict: string, extra = '') =>
    `printf '{"result":"${verdict}","files":[${extra}],"messages":[]}' > "$2/result.json"`;

  beforeAll(async () => {
    // Stands for the worker's secrets in its environment: never handed to a validator.
    process.env.VALIDATOR_TEST_SECRET = 'canary';
    mkdirSync(scripts, { recursive: true });
    mkdirSync(seen, { recursive: true });
    const hts = makeHtsFixtures();
    const files = { 'reads/a.txt': 'alpha\n', 'b.txt': 'beta\n' };
    deposit('passing', { 'DS-PASS': files });
    deposit('failing', { 'DS-FAIL': files });
    deposit('crashing', { 'DS-CRASH': files });
    deposit('hanging', { 'DS-HANG': files });
    deposit('memory', { 'DS-MEMORY': files });
    deposit('garbage', { 'DS-GARBAGE': files });
    deposit('oversized', { 'DS-OVERSIZED': files });
    deposit('meddling', { 'DS-MEDDLE-WRITE': files, 'DS-MEDDLE-ADD': files });
    deposit('hts', {
      'DS-HTS-OK': {
        'reads/sample.bam': hts.bam,
        'reads/sample.bam.bai': hts.bai,
        'calls/sample.vcf.gz': hts.vcfGz,
        'calls/sample.vcf.gz.tbi': hts.tbi,
        'README.txt': 'not an HTS file: left alone\n',
      },
      'DS-HTS-BROKEN': {
        'reads/sample.bam': hts.truncatedBam,
        'reads/sample.bam.bai': hts.bai,
      },
      'DS-HTS-NO-INDEX': { 'reads/sample.bam': hts.bam, 'calls/sample.vcf.gz': hts.vcfGz },
    });

    const sources = [
      source('passing', {
        script: script(
          'passing',
          `cp "$1/input.json" "${seen}/input.json"; env > "${seen}/env"; ${result('passed')}`,
        ),
        config: { strict: true },
      }),
      source('failing', {
        script: script(
          'failing',
          `cat > "$2/result.json" <<EOF
{"result":"failed","messages":[],"files":[
 {"path":"$1/data/reads/a.txt","result":"failed","messages":[{"level":"error","time":"2025-09-16T10:00:00Z","message":"Invalid header: missing @SQ"}]},
 {"path":"$1/data/b.txt","result":"passed","messages":[]}]}
EOF
exit 1`,
        ),
      }),
      source('crashing', {
        script: script('crashing', 'echo "Segmentation fault in parse_header" >&2; exit 139'),
      }),
      source('hanging', {
        script: script('hanging', `sleep 600 & echo $! > "${seen}/hanging.pid"; wait`),
        timeout_ms: HANG_LIMIT_MS,
      }),
      source('memory', {
        // bash holds a 300 MB string in its own memory: past a 64 MiB address space.
        script: script(
          'memory',
          `x=$(head -c 300000000 /dev/zero | tr '\\0' a); ${result('passed')}`,
          '/bin/bash',
        ),
        memory_mb: 64,
      }),
      source('garbage', { script: script('garbage', `printf 'PASSED!!{' > "$2/result.json"`) }),
      source('oversized', {
        // 20 MB of a valid start: past RESULT_MAX_BYTES (8 MiB), where prlimit stops the writer.
        script: script(
          'oversized',
          `{ printf '{"result":"passed","messages":[],"files":['; yes '{"path":"x","result":"passed","messages":[]},' | head -c 20000000; } > "$2/result.json"; exit 0`,
        ),
      }),
      source('meddling', {
        // The first run appends to a staged file, the second adds one beside it (what file modes
        // alone do not stop where the worker runs as root).
        script: script(
          'meddling',
          `if [ ! -e "${seen}/meddled" ]; then
  touch "${seen}/meddled"; chmod u+w "$1/data/b.txt"; echo tampered >> "$1/data/b.txt"
else
  touch "$1/data/b.txt.bai"
fi
${result('passed')}`,
        ),
      }),
      {
        name: 'hts',
        type: 'dropzone',
        root: join(base, 'dropzones', 'hts'),
        validators: [
          {
            name: 'hts-files',
            command: [HTS_VALIDATOR, '--input', '{input}', '--output', '{output}'],
          },
        ],
      },
    ];
    apps = await startProvisionerApps({
      ...(await queueEnv()),
      SOURCES: JSON.stringify(sources),
      STORAGE_ROOT: storage,
    });
  });

  afterAll(async () => {
    delete process.env.VALIDATOR_TEST_SECRET;
    await apps?.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('publishes once the validator passes; it was given input.json with every file, its size and checksums, and the config', async () => {
    const record = await importOf('passing', 'DS-PASS');
    expect(record).toMatchObject({ state: 'imported', error: null });
    expect(existsSync(join(published('passing', 'DS-PASS'), 'reads/a.txt'))).toBe(true);
    const input = JSON.parse(readFileSync(join(seen, 'input.json'), 'utf8'));
    const files = [...input.files].sort((a, b) => (a.path < b.path ? -1 : 1));
    const inputDir = dirname(files[0].path.replace(/\/data\/.*$/, '/data'));
    expect(files).toEqual([
      {
        path: `${inputDir}/data/b.txt`,
        size: 5,
        checksums: { sha256: digest('sha256', 'beta\n') },
      },
      {
        path: `${inputDir}/data/reads/a.txt`,
        size: 6,
        checksums: { sha256: digest('sha256', 'alpha\n') },
      },
    ]);
    expect(input.config).toEqual({ strict: true });
    // Nothing of the worker's environment (which holds its secrets) but PATH.
    const env = readFileSync(join(seen, 'env'), 'utf8');
    expect(process.env.VALIDATOR_TEST_SECRET).toBe('canary');
    expect(env).not.toContain('VALIDATOR_TEST_SECRET');
    expect(env).toContain('PATH=');
    // The run's directories are gone.
    expect(existsSync(inputDir)).toBe(false);
    // The provenance names the validator passed, which read the staging area itself.
    const provenance = JSON.parse(
      readFileSync(join(published('passing', 'DS-PASS'), '.provisioner/provenance.json'), 'utf8'),
    );
    expect(provenance.validation).toEqual({
      validators: [{ name: 'passing', result: 'passed', data: 'staged' }],
    });
  });

  it("refuses the import with the validator's messages in the import record", async () => {
    const record = await importOf('failing', 'DS-FAIL');
    expect(record.state).toBe('rejected');
    expect(record.error).toEqual({
      code: 'validation_failed',
      message:
        'validator "failing" refused the dataset: reads/a.txt: failing: Invalid header: missing @SQ',
      details: [
        {
          code: 'validation_error',
          path: 'reads/a.txt',
          message: 'failing: Invalid header: missing @SQ',
        },
      ],
    });
    expect(existsSync(published('failing', 'DS-FAIL'))).toBe(false);
  });

  it('refuses it when the validator crashes, saying how and what it printed last', async () => {
    const record = await importOf('crashing', 'DS-CRASH');
    expect(record.state).toBe('rejected');
    expect(record.error?.code).toBe('validator_crashed');
    expect(record.error?.message).toContain(
      'validator "crashing" exited with code 139 without a result',
    );
    expect(record.error?.message).toContain('Segmentation fault in parse_header');
    expect(existsSync(published('crashing', 'DS-CRASH'))).toBe(false);
  });

  it('kills a validator at its time limit, with everything it started, and refuses the import', async () => {
    const started = Date.now();
    const record = await importOf('hanging', 'DS-HANG');
    expect(Date.now() - started).toBeGreaterThanOrEqual(HANG_LIMIT_MS);
    expect(record.state).toBe('rejected');
    expect(record.error).toMatchObject({
      code: 'validator_timed_out',
      message: `validator "hanging" did not finish within its time limit of ${HANG_LIMIT_MS} ms and was killed`,
    });
    // The sleep it left running in its process group is gone too.
    const pid = Number(readFileSync(join(seen, 'hanging.pid'), 'utf8'));
    await until(() => !running(pid), `the validator's sleep (${pid}) to be killed`, 5000);
    expect(existsSync(published('hanging', 'DS-HANG'))).toBe(false);
  });

  it('refuses it when the validator runs out of its memory limit', async () => {
    const record = await importOf('memory', 'DS-MEMORY');
    expect(record.state).toBe('rejected');
    expect(record.error?.code).toBe('validator_crashed');
    expect(record.error?.message).toContain('its limits: 64 MiB of memory');
    expect(record.error?.message).toMatch(/cannot allocate/);
  });

  it('refuses it when result.json is not JSON, or too large (its writer is stopped at the bound)', async () => {
    const garbage = await importOf('garbage', 'DS-GARBAGE');
    expect(garbage.state).toBe('rejected');
    expect(garbage.error).toMatchObject({
      code: 'validator_result_invalid',
      message: 'validator "garbage" gave no usable result: result.json is not JSON',
    });
    const oversized = await importOf('oversized', 'DS-OVERSIZED');
    expect(oversized.state).toBe('rejected');
    expect(oversized.error).toMatchObject({
      code: 'validator_result_invalid',
      message: `validator "oversized" gave no usable result: result.json is larger than ${8 * 1024 * 1024} bytes`,
    });
  });

  it('refuses it when the validator changed a staged file or added one, even when it passed', async () => {
    const written = await importOf('meddling', 'DS-MEDDLE-WRITE');
    expect(written.state).toBe('rejected');
    expect(written.error).toMatchObject({
      code: 'validator_changed_data',
      details: [expect.objectContaining({ path: 'b.txt' })],
    });
    const added = await importOf('meddling', 'DS-MEDDLE-ADD');
    expect(added.state).toBe('rejected');
    expect(added.error).toMatchObject({
      code: 'validator_changed_data',
      details: [expect.objectContaining({ path: 'b.txt.bai' })],
    });
    expect(existsSync(published('meddling', 'DS-MEDDLE-ADD'))).toBe(false);
  });

  it('hts-files (samtools, bcftools): passes indexed BAM and VCF files, refuses a broken BAM and missing indexes', async () => {
    const ok = await importOf('hts', 'DS-HTS-OK');
    expect(ok).toMatchObject({ state: 'imported', error: null });

    const broken = await importOf('hts', 'DS-HTS-BROKEN');
    expect(broken.state).toBe('rejected');
    expect(broken.error?.code).toBe('validation_failed');
    expect(broken.error?.details).toEqual([
      {
        code: 'validation_error',
        path: 'reads/sample.bam',
        message: expect.stringMatching(/^hts-files: does not parse .*missing EOF block/),
      },
    ]);

    const noIndex = await importOf('hts', 'DS-HTS-NO-INDEX');
    expect(noIndex.state).toBe('rejected');
    const byPath = [...(noIndex.error?.details ?? [])].sort((a, b) =>
      (a as { path: string }).path < (b as { path: string }).path ? -1 : 1,
    );
    expect(byPath).toEqual([
      {
        code: 'validation_error',
        path: 'calls/sample.vcf.gz',
        message: 'hts-files: has no index (sample.vcf.gz.tbi or sample.vcf.gz.csi)',
      },
      {
        code: 'validation_error',
        path: 'reads/sample.bam',
        message: 'hts-files: has no index (sample.bam.bai or sample.bai or sample.bam.csi)',
      },
    ]);
  });
});
