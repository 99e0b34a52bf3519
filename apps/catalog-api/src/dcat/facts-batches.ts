/**
 * Datasets in the first facts statement of a page: few, so its first bytes leave soon after the
 * page's ids are known (decisions/dcat-sent-while-read.md).
 */
export const FIRST_BATCH = 100;

/**
 * Datasets in each later statement. Planning the facts statement costs about as much as reading
 * 25 datasets with it, so the rest of a page goes in few statements; 300 keeps a batch's text
 * small beside the young generation (decisions/dcat-larger-batches-as-text.md).
 */
export const BATCH = 300;

/**
 * Datasets in the last statement, at most: the last batch is mapped with nothing left to read,
 * so PostgreSQL waits meanwhile, and the page's next request waits for it
 * (decisions/dcat-page-pipeline.md).
 */
export const LAST_BATCH = 100;

/**
 * `ids` cut into the batches their facts are read in: FIRST_BATCH, then BATCH at a time, the
 * rest before the last at most BATCH and the last at most LAST_BATCH.
 */
export function factsBatches<T>(ids: readonly T[]): T[][] {
  const batches: T[][] = [];
  for (let start = 0; start < ids.length;) {
    const rest = ids.length - start;
    let size = rest;
    if (batches.length === 0) size = FIRST_BATCH;
    else if (rest > BATCH + LAST_BATCH) size = BATCH;
    else if (rest > LAST_BATCH) size = rest - LAST_BATCH;
    batches.push(ids.slice(start, start + size));
    start += size;
  }
  return batches;
}
