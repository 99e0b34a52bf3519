import { SourceUnavailableError } from '../source-system';

export interface DssSubmissionSummary {
  id: number;
  ref_name: string;
  status?: string;
  status_code?: string;
  [key: string]: unknown;
}

export interface DssDatasetsBody {
  data: Record<string, unknown>[];
  submission?: Record<string, unknown>;
}

/** A listing that needs more pages than this is not ending: an error, never a silent stop. */
const MAX_PAGES = 100_000;

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The submission system's service API (`/api/v1`, `X-API-Key`, errors as `{error}`), in either
 * of the two versions in use (docs/decisions/dss-both-api-versions.md):
 * - one reads `?status=a,b`, answers the whole list at once and ignores `after`; it has
 *   `GET /submissions/<id>` (`{data: details}`) and answers 404 for the datasets of a
 *   submission at a status it does not serve;
 * - the other reads repeated `status`, pages with an `after` id cursor, refuses unknown
 *   parameters and the comma form with 400, has no single-submission route and answers 409.
 * Each listing asks one status per request, the one form both read alike, and learns from the
 * answers whether the server pages. Anything that would leave a listing incomplete is an error
 * that says why. Every call has a time-out; anything but a usable answer is
 * SourceUnavailableError (-> 502).
 */
export class DssClient {
  constructor(
    private readonly sourceName: string,
    private readonly baseUrl: string,
    private readonly apiKey: string,
    private readonly timeoutMs: number,
  ) {}

  /** Every submission at the given statuses (none: the server's default set), by id. */
  async listSubmissions(statuses: string[]): Promise<DssSubmissionSummary[]> {
    const byId = new Map<number, DssSubmissionSummary>();
    for (const status of statuses.length > 0 ? statuses : [undefined]) {
      // A submission that changed status between two of these listings is kept once.
      for (const summary of await this.listStatus(status)) byId.set(summary.id, summary);
    }
    return [...byId.values()].sort((a, b) => a.id - b.id);
  }

  /** Details at any status; null when the system does not know the id or has no such route. */
  async getSubmission(id: number): Promise<Json | null> {
    const body = await this.get(`/api/v1/submissions/${id}`, [404]);
    if (body === null) return null;
    const object = this.object(body, 'submission');
    // The version with this route wraps the details in `data`.
    return isObject(object.data) ? object.data : object;
  }

  /** Datasets of a submission; null when the system will not serve them at its status (404/409). */
  async getDatasets(id: number): Promise<DssDatasetsBody | null> {
    const body = await this.get(`/api/v1/submissions/${id}/datasets`, [404, 409]);
    if (body === null) return null;
    const data = this.counted(body, `datasets of submission ${id}`);
    const submission = this.object(body, 'datasets').submission;
    return {
      data: data.filter(isObject),
      submission: isObject(submission) ? submission : undefined,
    };
  }

  /**
   * One status (or the default set), following the `after` cursor until an empty page. A server
   * that answers ids at or below the cursor ignores it: acceptable only from the version that
   * answers the whole list at once (recognised by its single-submission route), whose second
   * answer is then the complete list again; from any other server the listing cannot complete.
   */
  private async listStatus(status: string | undefined): Promise<DssSubmissionSummary[]> {
    const what = status === undefined ? 'the default statuses' : `status "${status}"`;
    const first = await this.page(status, null, what);
    if (first.length === 0) return first;
    const all = [...first];
    let cursor = highestId(first);
    for (let pages = 1; ; pages++) {
      if (pages >= MAX_PAGES)
        throw this.unavailable(`listing ${what} did not end after ${MAX_PAGES} pages`);
      const next = await this.page(status, cursor, what);
      if (next.length === 0) break;
      const behind = next.find((s) => s.id <= cursor);
      if (behind === undefined) {
        for (const summary of next) all.push(summary);
        cursor = highestId(next);
        continue;
      }
      if (pages === 1 && (await this.getSubmission(first[0].id)) !== null) return next;
      throw this.unavailable(
        `listing ${what} cannot be completed: asked for ids after ${cursor}, the server ` +
          `answered id ${behind.id} (the "after" cursor did not advance)`,
      );
    }
    return all;
  }

  private async page(
    status: string | undefined,
    after: number | null,
    what: string,
  ): Promise<DssSubmissionSummary[]> {
    const query = new URLSearchParams();
    if (status !== undefined) query.set('status', status);
    if (after !== null) query.set('after', String(after));
    const body = await this.get(`/api/v1/submissions${query.size ? `?${query.toString()}` : ''}`);
    const items = this.counted(body, `listing of ${what}`);
    const seen = new Set<number>();
    return items.map((item, index) => {
      if (!isObject(item) || !Number.isSafeInteger(item.id) || typeof item.ref_name !== 'string')
        throw this.unavailable(`listing of ${what}: entry ${index} has no integer id and ref_name`);
      const summary = item as DssSubmissionSummary;
      if (seen.has(summary.id))
        throw this.unavailable(`listing of ${what}: submission ${summary.id} answered twice`);
      seen.add(summary.id);
      if (status !== undefined && summary.status_code !== status)
        throw this.unavailable(
          `listing of ${what}: the server ignored the status filter (submission ` +
            `${summary.id} is at status ${JSON.stringify(String(summary.status_code).slice(0, 40))})`,
        );
      return summary;
    });
  }

  /** The `data` list of a `{data, count}` body, which must agree with its count. */
  private counted(body: unknown, what: string): unknown[] {
    const object = this.object(body, what);
    if (!Array.isArray(object.data)) throw this.unavailable(`unexpected ${what}: no data list`);
    if (object.count !== object.data.length)
      throw this.unavailable(
        `${what}: count ${JSON.stringify(object.count)} disagrees with the ` +
          `${object.data.length} entries in data`,
      );
    return object.data as unknown[];
  }

  private object(body: unknown, what: string): Json {
    if (!isObject(body)) throw this.unavailable(`unexpected ${what} body`);
    return body;
  }

  private unavailable(message: string): SourceUnavailableError {
    return new SourceUnavailableError(
      this.sourceName,
      `submission system "${this.sourceName}": ${message}`,
    );
  }

  /** GET returning parsed JSON; statuses in `absentOn` give null. */
  private async get(path: string, absentOn: number[] = []): Promise<unknown> {
    let response: Response;
    const signal = AbortSignal.timeout(this.timeoutMs);
    try {
      response = await fetch(`${this.baseUrl}${path}`, {
        headers: { 'X-API-Key': this.apiKey, Accept: 'application/json' },
        signal,
      });
    } catch (error) {
      const reason =
        (error as Error).name === 'TimeoutError'
          ? `no answer within ${this.timeoutMs} ms`
          : 'unreachable';
      throw this.unavailable(reason);
    }
    let text: string;
    try {
      text = await response.text();
    } catch {
      throw this.unavailable(`answer cut off or slower than ${this.timeoutMs} ms`);
    }
    if (absentOn.includes(response.status)) return null;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw this.unavailable(`answered ${response.status} without JSON`);
    }
    if (!response.ok) {
      const message = (body as { error?: unknown })?.error;
      throw this.unavailable(
        `answered ${response.status}${typeof message === 'string' ? `: ${message}` : ''}`,
      );
    }
    return body;
  }
}

function highestId(summaries: DssSubmissionSummary[]): number {
  let highest = -Infinity;
  for (const { id } of summaries) if (id > highest) highest = id;
  return highest;
}
