import type { DatasetReading } from './dataset-directory/dataset-directory';
import { DATASET_DOCUMENT } from './dataset-directory/dataset-directory';
import type { JsonDocument, JsonObject } from './dataset-directory/json-document';
import type { SourceProblem } from './dataset-directory/source-file';
import { isSafeSegment } from './safe-segment';
import { datasetFromInspection } from './source-dataset';
import { SourceRefusedError } from './source-system';
import type { DatasetFilter, SourceDataset, SourceSubmission } from './source-system';
import type { SourceLimits } from '../config/source-config';

/**
 * The metadata documents of the drop zone's layout (submission.json, dataset.json), read the
 * same way wherever that layout lives: a drop-zone directory or an S3 inbox.
 */
export const SUBMISSION_DOCUMENT = 'submission.json';

/** A value as shown in a message: strings quoted and cut short, anything else by its type. */
function shown(value: unknown): string {
  if (typeof value === 'string')
    return JSON.stringify(value.length > 130 ? `${value.slice(0, 130)}…` : value);
  return value === undefined
    ? 'nothing'
    : `a ${value === null ? 'null' : Array.isArray(value) ? 'list' : typeof value}`;
}

/** Why a submission.json names too many datasets to be listed; null when it does not. */
export function tooManyDatasets(
  raw: JsonObject | null,
  limits: SourceLimits,
): SourceProblem | null {
  const named = Array.isArray(raw?.datasets) ? (raw.datasets as unknown[]).length : 0;
  const max = limits.submissionMaxDatasets;
  return named > max
    ? {
        code: 'too_many_datasets',
        path: SUBMISSION_DOCUMENT,
        message: `${SUBMISSION_DOCUMENT} names ${named} datasets, over the limit of ${max} (SOURCE_SUBMISSION_MAX_DATASETS)`,
      }
    : null;
}

/** Why a submission.json does not describe the folder it sits in; null when it does. */
export function foreignDocument(ref: string, raw: JsonObject | null): SourceProblem | null {
  if (!raw || raw.ref === ref) return null;
  return {
    code: 'metadata_invalid',
    path: SUBMISSION_DOCUMENT,
    message: `${SUBMISSION_DOCUMENT} names submission ${shown(raw.ref)}, not ${ref} (its folder)`,
  };
}

/**
 * Throws what keeps submission `ref` out of listings, for every route naming it: a problem
 * reading its submission.json, too many datasets, or a document of another folder.
 */
export function refuseUnlistedSubmission(
  source: string,
  ref: string,
  raw: JsonObject | null,
  readProblem: SourceProblem | null | undefined,
  limits: SourceLimits,
): void {
  const problem = readProblem ?? tooManyDatasets(raw, limits) ?? foreignDocument(ref, raw);
  if (problem)
    throw new SourceRefusedError(source, `submission ${ref} is refused: ${problem.message}`, [
      { ...problem, path: `submissions/${ref}/${problem.path}` },
    ]);
}

/**
 * A submission from its submission.json. One that does not describe the folder it sits in is
 * ignored, not guessed at; one naming more datasets than allowed is refused (null here: the
 * source's getSubmission says why).
 */
export function submissionFromDocument(
  ref: string,
  raw: JsonObject | null,
  importableStatuses: string[],
  limits: SourceLimits,
): SourceSubmission | null {
  if (!raw || raw.ref !== ref || tooManyDatasets(raw, limits)) return null;
  const status = typeof raw.status === 'string' ? raw.status : 'unknown';
  const datasets = Array.isArray(raw.datasets) ? (raw.datasets as unknown[]) : [];
  const datasetIds = datasets
    .map((d: unknown) =>
      typeof d === 'string'
        ? d
        : typeof d === 'object' && d !== null
          ? (d as Record<string, unknown>).dataset_id
          : undefined,
    )
    .filter(isSafeSegment);
  return {
    ref,
    title: typeof raw.title === 'string' ? raw.title : ref,
    status,
    project: typeof raw.project === 'string' ? raw.project : '',
    eligible: importableStatuses.includes(status),
    datasetIds: [...new Set(datasetIds)],
    raw,
  };
}

/** Why dataset.json does not make this dataset the submission's; null when it does. */
function ownershipProblem(
  datasetId: string,
  submission: SourceSubmission,
  document: JsonDocument | null,
): SourceProblem | null {
  const invalid = (message: string): SourceProblem => ({
    code: 'metadata_invalid',
    path: DATASET_DOCUMENT,
    message: `${DATASET_DOCUMENT} ${message}`,
  });
  if (document?.problem) return document.problem;
  const value = document?.value;
  if (!value) return invalid(`is missing: it must name its submission (${submission.ref})`);
  if (value.submission !== submission.ref)
    return invalid(
      `names submission ${shown(value.submission)}, not ${submission.ref} which lists the dataset`,
    );
  if (value.dataset_id !== undefined && value.dataset_id !== datasetId)
    return invalid(`names dataset ${shown(value.dataset_id)}, not ${datasetId}`);
  return null;
}

/** A dataset of the layout, from its reading: its dataset.json must name the submission. */
export function datasetFromReading(
  datasetId: string,
  submission: SourceSubmission,
  reading: DatasetReading,
): SourceDataset {
  const meta = reading.document?.value ?? null;
  return datasetFromInspection(datasetId, submission, reading.inspection, {
    title: typeof meta?.title === 'string' ? meta.title : datasetId,
    declaredBytes: null,
    metadata: meta,
    invalid: ownershipProblem(datasetId, submission, reading.document),
  });
}

/** What finds the submission that lists a dataset: a source's own lookups. */
interface SubmissionLookup {
  getSubmission(submissionRef: string): Promise<SourceSubmission | null>;
  listSubmissions(): Promise<SourceSubmission[]>;
}

/**
 * A dataset of the layout with the submission that lists it (null when none does): the one its
 * dataset.json names when that one lists it (one read), else the first submission listing it.
 */
export async function datasetWithSubmission(
  source: SubmissionLookup,
  datasetId: string,
  reading: DatasetReading,
): Promise<{ dataset: SourceDataset; submission: SourceSubmission } | null> {
  const owner = reading.document?.value?.submission;
  let submission: SourceSubmission | null = null;
  if (isSafeSegment(owner)) {
    const named = await source.getSubmission(owner);
    if (named?.datasetIds.includes(datasetId)) submission = named;
  }
  submission ??=
    (await source.listSubmissions()).find((s) => s.datasetIds.includes(datasetId)) ?? null;
  if (!submission) return null;
  return { dataset: datasetFromReading(datasetId, submission, reading), submission };
}

/** The datasets the submissions name (those `include` accepts), each with its submission. */
function namedDatasets(
  submissions: SourceSubmission[],
  include?: DatasetFilter,
): { id: string; submission: SourceSubmission }[] {
  return submissions.flatMap((submission) =>
    submission.datasetIds
      .filter((id) => !include || include(submission, id))
      .map((id) => ({ id, submission })),
  );
}

/**
 * A listing of the layout's datasets (SourceSystem.listDatasets): those the submissions name
 * (and `include` accepts), from their readings, which `read` gives in the order of the ids (a
 * drop zone in one batch on the scan thread, an inbox in requests).
 */
export async function listedDatasets(
  submissions: SourceSubmission[],
  include: DatasetFilter | undefined,
  read: (datasetIds: string[]) => Promise<DatasetReading[]>,
): Promise<SourceDataset[]> {
  const pairs = namedDatasets(submissions, include);
  const readings = await read(pairs.map(({ id }) => id));
  return pairs.map(({ id, submission }, i) => datasetFromReading(id, submission, readings[i]));
}
