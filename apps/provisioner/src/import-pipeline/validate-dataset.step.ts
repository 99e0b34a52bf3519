import { chmod, lstat, mkdir, open, readdir, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mapLimit } from '../common/map-limit';
import type { ValidatorConfig } from '../config/validator-config';
import type { ProvenanceValidator } from '../storage/provenance';
import { JOURNAL_PATH } from '../storage/staged-files-journal';
import type { StagingArea } from '../storage/storage-system';
import type { DatasetImportContext } from './dataset-import-context';
import { type ImportProblem, ImportRejectedError, ImportStoppedError } from './import-errors';
import type { ImportPlan } from './preflight';
import { ProblemList } from './problem-list';
import { materialiseData } from './validation/materialise-data';
import { runValidatorProcess, type ValidatorDirectories } from './validation/validator-process';
import {
  readResult,
  RESULT_MAX_BYTES,
  type ValidatorMessage,
  type ValidatorResult,
} from './validation/validator-result';
import { removeTree, ValidatorWorkArea } from './validation/validator-work-area';

/** Where a container run mounts the input directory (the GDI contract's path). */
export const CONTAINER_INPUT = '/mnt/input';
/** input.json is written in pieces of about this many characters. */
const INPUT_PIECE_CHARS = 1024 * 1024;
/** Of a crashed validator's last output, this much goes into the refusal's message. */
const OUTPUT_IN_MESSAGE = 500;

/** One validator that did not pass: the refusal's code and message, and the problems it named. */
interface ValidatorFailure {
  code: string;
  message: string;
  problems: ProblemList;
}

/** Where validations work without a worker's setting (tests that run the pipeline alone). */
let defaultWorkArea: ValidatorWorkArea | undefined;

/**
 * The validate step, after the files are staged and their checksums verified and before
 * anything is flushed or published: each of the source's validators is run in turn on the
 * dataset's verified bytes, to the GDI validator contract
 * (docs/decisions/validators-before-publication.md): the staged files themselves where they are
 * plain files on this host, else a copy in the worker's bounded work directory, checked against
 * the same checksums (materialise-data.ts) and removed afterwards. One that fails, crashes,
 * outlives its time limit, writes no usable result.json or changes a file refuses the import
 * (not retried), naming why. Nothing of it is kept: a later attempt of the same import (after a
 * stop or a killed worker) runs every validator again. Returns what the provenance records.
 */
export async function validateDataset(
  ctx: DatasetImportContext,
  plan: ImportPlan,
  staging: StagingArea,
): Promise<ProvenanceValidator[]> {
  const validators = ctx.validators ?? [];
  if (validators.length === 0) return [];
  const staged = ctx.storage.encryption === undefined ? staging.localFiles?.root : undefined;
  const area =
    (ctx.validatorWork ??=
    defaultWorkArea ??=
      new ValidatorWorkArea(tmpdir(), Number.MAX_SAFE_INTEGER));
  const work = await area.open(staged === undefined ? plan.bytesTotal : 0, ctx.signal);
  try {
    const data = staged ?? join(work.path, 'data');
    if (staged === undefined)
      await materialiseData(plan, data, {
        encrypted: ctx.storage.encryption !== undefined,
        signal: ctx.signal,
      });
    await runEach(ctx, validators, plan, data, work.path);
  } finally {
    await work.release();
  }
  const given = staged === undefined ? 'copied' : 'staged';
  return validators.map(({ name }) => ({ name, result: 'passed', data: given }));
}

/** Each validator in turn, then the check that none changed the files: refuses on any failure. */
async function runEach(
  ctx: DatasetImportContext,
  validators: readonly ValidatorConfig[],
  plan: ImportPlan,
  data: string,
  work: string,
): Promise<void> {
  const before = await identities(data, plan);
  const failures: ValidatorFailure[] = [];
  for (const [n, validator] of validators.entries()) {
    if (ctx.signal?.aborted) throw new ImportStoppedError();
    const failure = await runOne(ctx, validator, plan, data, join(work, `run-${n}`));
    if (failure !== null) failures.push(failure);
  }
  const changed = await changedFiles(data, plan, before);
  await addedEntries(data, plan, changed);
  if (changed.total > 0)
    throw new ImportRejectedError(
      'validator_changed_data',
      `${changed.total} file(s) changed while the validators ran`,
      changed.details(),
    );
  if (failures.length > 0) throw refusal(failures);
}

async function runOne(
  ctx: DatasetImportContext,
  validator: ValidatorConfig,
  plan: ImportPlan,
  data: string,
  work: string,
): Promise<ValidatorFailure | null> {
  const dirs: ValidatorDirectories = {
    input: join(work, 'input'),
    output: join(work, 'output'),
    data,
    scratch: join(work, 'scratch'),
  };
  try {
    await mkdir(work, { mode: 0o700 });
    await Promise.all([mkdir(dirs.input), mkdir(dirs.output), mkdir(dirs.scratch)]);
    // A subprocess finds the files at <input>/data, as a container at /mnt/input/data, where
    // its engine mounts {data} (on the directory made here).
    if (validator.container) await mkdir(join(dirs.input, 'data'));
    else await symlink(data, join(dirs.input, 'data'));
    const dataRoot = `${validator.container ? CONTAINER_INPUT : dirs.input}/data`;
    await writeInput(join(dirs.input, 'input.json'), validator, plan, dataRoot);
    await chmod(dirs.input, 0o555);
    const exit = await runValidatorProcess(validator, dirs, RESULT_MAX_BYTES + 1, ctx.signal);
    const named = `validator "${validator.name}"`;
    if (exit.kind === 'stopped') throw new ImportStoppedError();
    if (exit.kind === 'not_started')
      return failure('validator_crashed', `${named} could not be started: ${exit.message}`);
    if (exit.kind === 'timed_out')
      return failure(
        'validator_timed_out',
        `${named} did not finish within its time limit of ${validator.timeout_ms} ms and was killed${lastOutput(exit.output)}`,
      );
    const reading = await readResult(join(dirs.output, 'result.json'));
    const result = 'ok' in reading ? reading.ok : null;
    const failedResult = result !== null && failedOf(result);
    if (exit.code !== 0 && !failedResult) {
      const how =
        exit.signal === 'SIGXFSZ'
          ? `was killed for writing a file past ${RESULT_MAX_BYTES} bytes`
          : exit.signal !== null
            ? `was killed by ${exit.signal}`
            : `exited with code ${exit.code}`;
      return failure(
        'validator_crashed',
        `${named} ${how} without a result (its limits: ${validator.memory_mb} MiB of memory, ${validator.timeout_ms} ms)${lastOutput(exit.output)}`,
      );
    }
    if ('problem' in reading)
      return failure(
        'validator_result_invalid',
        `${named} gave no usable result: ${reading.problem}`,
      );
    if (!failedResult) return null;
    return validationFailure(validator.name, result!, `${dataRoot}/`);
  } finally {
    // The work area removes the directory whole; the validator's output goes now.
    await chmod(dirs.input, 0o755).catch(() => undefined);
    await removeTree(work);
  }
}

function failure(code: string, message: string): ValidatorFailure {
  return { code, message, problems: new ProblemList() };
}

function lastOutput(output: string): string {
  const text = output.trim();
  if (text === '') return '';
  const tail = text.length > OUTPUT_IN_MESSAGE ? `…${text.slice(-OUTPUT_IN_MESSAGE)}` : text;
  return `; its last output: ${tail}`;
}

/** Failed: the result says so, or a file's result does (`passed` means every file passed). */
function failedOf(result: ValidatorResult): boolean {
  return result.result === 'failed' || result.files.some((file) => file.result === 'failed');
}

/**
 * What a failed result says, as the import's problems: the errors (or, without any, the
 * warnings), paths in them relative to the dataset (`prefix` taken out).
 */
function validationFailure(
  name: string,
  result: ValidatorResult,
  prefix: string,
): ValidatorFailure {
  const problems = new ProblemList();
  const add = (messages: ValidatorMessage[], path?: string): void => {
    const errors = messages.filter((m) => m.level === 'error');
    const told = errors.length > 0 ? errors : messages.filter((m) => m.level === 'warning');
    for (const { message } of told)
      problems.add({
        code: 'validation_error',
        ...(path ? { path } : {}),
        // The worker's directories mean nothing in the record: paths are the dataset's.
        message: `${name}: ${message.split(prefix).join('')}`,
      });
    if (told.length === 0 && path !== undefined)
      problems.add({ code: 'validation_error', path, message: `${name}: failed` });
  };
  add(result.messages);
  for (const file of result.files)
    if (file.result === 'failed')
      add(file.messages, file.path.startsWith(prefix) ? file.path.slice(prefix.length) : file.path);
  if (problems.total === 0)
    problems.add({ code: 'validation_error', message: `${name}: failed without a message` });
  const [first] = problems.details();
  const where = first.path ? `${first.path}: ` : '';
  const more = problems.total > 1 ? ` (and ${problems.total - 1} more problem(s))` : '';
  return {
    code: 'validation_failed',
    message: `validator "${name}" refused the dataset: ${where}${first.message}${more}`,
    problems,
  };
}

/** The first failure's code; every failure's message; their problems, bounded. */
function refusal(failures: ValidatorFailure[]): ImportRejectedError {
  const details = new ProblemList();
  for (const { problems } of failures) details.addList(problems);
  return new ImportRejectedError(
    failures[0].code,
    failures.map((f) => f.message).join('; '),
    details.details(),
  );
}

/**
 * input.json: every file of the dataset with its path as the validator sees it, its size and
 * checksums (`files`, the contract's file content validation), or its path only (`paths`, file
 * structure validation); and the validator's `config`. Written in pieces: a dataset of a
 * million files is never held as one text.
 */
async function writeInput(
  path: string,
  validator: ValidatorConfig,
  { files, algorithms }: ImportPlan,
  dataRoot: string,
): Promise<void> {
  const handle = await open(path, 'wx', 0o444);
  try {
    let piece = validator.mode === 'files' ? '{"files":[' : '{"paths":[';
    for (let i = 0; i < files.count; i++) {
      const at = `${dataRoot}/${files.path(i)}`;
      const entry =
        validator.mode === 'paths'
          ? JSON.stringify(at)
          : JSON.stringify({
              path: at,
              size: files.size[i],
              checksums: {
                sha256: files.digestHex('sha256', i),
                ...(algorithms.includes('md5') ? { md5: files.digestHex('md5', i) } : {}),
              },
            });
      piece += i === 0 ? entry : `,${entry}`;
      if (piece.length >= INPUT_PIECE_CHARS) {
        await handle.write(piece);
        piece = '';
      }
    }
    await handle.write(`${piece}],"config":${JSON.stringify(validator.config ?? {})}}\n`);
  } finally {
    await handle.close();
  }
}

/** Each staged file's inode, size, mtime and ctime (a write or a chmod changes the last). */
async function identities(data: string, { files }: ImportPlan): Promise<Float64Array> {
  const seen = new Float64Array(files.count * 4);
  const indexes = Array.from({ length: files.count }, (_, i) => i);
  await mapLimit(indexes, 16, async (i) => {
    const stats = await lstat(join(data, files.path(i))).catch(() => null);
    if (stats === null) return;
    seen.set([stats.ino, stats.size, stats.mtimeMs, stats.ctimeMs], i * 4);
  });
  return seen;
}

async function changedFiles(
  data: string,
  plan: ImportPlan,
  before: Float64Array,
): Promise<ProblemList> {
  const after = await identities(data, plan);
  const changed = new ProblemList();
  for (let i = 0; i < plan.files.count; i++) {
    const at = i * 4;
    if (
      after[at] !== before[at] ||
      after[at + 1] !== before[at + 1] ||
      after[at + 2] !== before[at + 2] ||
      after[at + 3] !== before[at + 3]
    ) {
      const problem: ImportProblem = {
        code: 'validator_changed_data',
        path: plan.files.path(i),
        message: 'the staged file was changed, replaced or removed while the validators ran',
      };
      changed.add(problem);
    }
  }
  return changed;
}

/**
 * What the area holds besides the dataset's files and the staging journal: a file, link or
 * directory a validator made (an index written beside a BAM), which publication would carry.
 */
async function addedEntries(
  data: string,
  { files }: ImportPlan,
  found: ProblemList,
): Promise<void> {
  const added = (path: string): void =>
    found.add({
      code: 'validator_changed_data',
      path,
      message: 'made while the validators ran: the dataset has no such file or directory',
    });
  // Returns how many of the dataset's files (and the journal) are below `dir`.
  const walk = async (dir: string): Promise<number> => {
    let expected = 0;
    for (const entry of await readdir(dir ? join(data, dir) : data, { withFileTypes: true })) {
      const path = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        const below = await walk(path);
        if (below === 0) added(path);
        expected += below;
      } else if (path === JOURNAL_PATH || (entry.isFile() && files.indexOf(path) >= 0)) {
        expected += 1;
      } else added(path);
    }
    return expected;
  };
  await walk('');
}
