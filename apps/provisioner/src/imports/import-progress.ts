export interface ImportProgress {
  files_done: number;
  files_total: number;
  bytes_done: number;
  bytes_total: number;
}

export const NO_PROGRESS: ImportProgress = {
  files_done: 0,
  files_total: 0,
  bytes_done: 0,
  bytes_total: 0,
};
