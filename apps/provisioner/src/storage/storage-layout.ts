/** Where things live in storage (the contract's layout), as logical paths. */
export const PROVENANCE_DIR = '.provisioner';
export const PROVENANCE_FILE = 'provenance.json';
export const STORED_MANIFEST_FILE = 'manifest-sha256.txt';
export const SUBMISSION_FILE = 'submission.json';

export function collectionPath(project: string, submissionRef: string): string {
  return `projects/${project}/${submissionRef}`;
}

export function rawPath(project: string, submissionRef: string): string {
  return `${collectionPath(project, submissionRef)}/data/raw`;
}

export function datasetPath(project: string, submissionRef: string, datasetId: string): string {
  return `${rawPath(project, submissionRef)}/${datasetId}`;
}

/**
 * The object whose presence makes a dataset complete: written last, after every file and the
 * stored manifest. Backends without an atomic rename (S3) publish by writing it.
 */
export function datasetCommitObject(datasetPath: string): string {
  return `${datasetPath}/${PROVENANCE_DIR}/${PROVENANCE_FILE}`;
}

/** A dataset's path (…/data/raw/<dataset_id>), as opposed to a collection or a file in one. */
export function isDatasetPath(path: string): boolean {
  return /^projects\/[^/]+\/[^/]+\/data\/raw\/[^/]+$/.test(path);
}
