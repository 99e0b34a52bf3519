import { MAX_KEPT_PROBLEMS } from '../sources/source-system';

/**
 * What one import record and one page of `GET /imports` may weigh, whatever a depositor put in
 * a dataset (issue 30: 200,000 wrong digests made a 43 MB record, served whole by both routes).
 *
 * - A record keeps at most 1,000 problems in `error.details`, then one `more_problems` entry
 *   with the `count` of the others; each text of a problem at most DETAIL_TEXT_CHARS characters,
 *   the message at most MESSAGE_CHARS: a record's error weighs at most about 700 KB.
 * - A page of `GET /imports` shows the first LISTED_DETAILS problems of each record and the
 *   count of the rest; `GET /imports/<id>` shows all that were kept: a page of 200 records
 *   weighs at most about 2 MB.
 */
export const DETAIL_TEXT_CHARS = 300;
export const MESSAGE_CHARS = 2000;
export const LISTED_DETAILS = 10;

const MORE = 'more_problems';

/** A problem's entry as stored: an object of short texts (anything else is described). */
function boundedEntry(entry: unknown): Record<string, unknown> {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
    return { code: 'problem', message: clip(String(entry), DETAIL_TEXT_CHARS) };
  const bounded: Record<string, unknown> = {};
  let fields = 0;
  for (const [key, value] of Object.entries(entry as Record<string, unknown>)) {
    if (++fields > 8) break;
    bounded[clip(key, 40)] =
      typeof value === 'string'
        ? clip(value, DETAIL_TEXT_CHARS)
        : typeof value === 'number' || typeof value === 'boolean' || value === null
          ? value
          : clip(JSON.stringify(value) ?? '', DETAIL_TEXT_CHARS);
  }
  return bounded;
}

export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** How many problems an entry stands for: a `more_problems` entry, its count; others one. */
function weightOf(entry: unknown): number {
  if (typeof entry === 'object' && entry !== null && (entry as { code?: unknown }).code === MORE) {
    const count = (entry as { count?: unknown }).count;
    if (typeof count === 'number' && Number.isSafeInteger(count) && count >= 0) return count;
    const counted = /^(\d+) more/.exec(String((entry as { message?: unknown }).message ?? ''));
    return counted ? Number(counted[1]) : 1;
  }
  return 1;
}

function moreEntry(count: number): Record<string, unknown> {
  return { code: MORE, message: `${count} more problem(s) not listed`, count };
}

/**
 * The first `keep` problems of a list (each bounded) and, when there were more, one
 * `more_problems` entry counting every problem left out (those an earlier cut counted too).
 */
export function boundedDetails(details: readonly unknown[], keep = MAX_KEPT_PROBLEMS): unknown[] {
  const kept: unknown[] = [];
  let more = 0;
  for (const entry of details) {
    const weight = weightOf(entry);
    const isMore = weight !== 1 || (entry as { code?: unknown } | null)?.code === MORE;
    if (!isMore && kept.length < keep) kept.push(boundedEntry(entry));
    else more += weight;
  }
  if (more > 0) kept.push(moreEntry(more));
  return kept;
}

/** An error as stored on the job: message and details bounded (see the top of this file). */
export function boundedError<E extends { message: string; details: unknown[] }>(error: E): E {
  return {
    ...error,
    message: clip(error.message, MESSAGE_CHARS),
    details: boundedDetails(error.details),
  };
}
