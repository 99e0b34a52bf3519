import { SourceUnavailableError } from '../source-system';

export interface DssSubmissionSummary {
  id: number | string;
  ref_name: string;
  status?: string;
  status_code?: string;
  [key: string]: unknown;
}

export interface DssDatasetsBody {
  data: Record<string, unknown>[];
  submission?: Record<string, unknown>;
}

const MAX_PAGES = 100_000;

/**
 * The submission system's service API: /api/v1/submissions (status filter, `after` cursor),
 * /submissions/<id>, /submissions/<id>/datasets; X-API-Key; errors as {error}.
 * Every call has a time-out; anything but a usable answer is SourceUnavailableError (-> 502).
 */
export class DssClient {
  constructor(
    private readonly sourceName: string,
    private readonly baseUrl: string,
    private readonly apiKey: string,
    private readonly timeoutMs: number,
  ) {}

  async listSubmissions(statuses: string[]): Promise<DssSubmissionSummary[]> {
    const all: DssSubmissionSummary[] = [];
    const seen = new Set<string>();
    let after: string | null = null;
    for (let page = 0; page < MAX_PAGES; page++) {
      const query = new URLSearchParams();
      statuses.forEach((s) => query.append('status', s));
      if (after !== null) query.set('after', after);
      const body = await this.get(`/api/v1/submissions${query.size ? `?${query.toString()}` : ''}`);
      const data = this.listData(body, 'submissions');
      // A server that ignores `after` would hand back the same page forever: stop on no progress.
      const fresh = data.filter(
        (item) => this.isSummary(item) && !seen.has(String(item.id)),
      ) as DssSubmissionSummary[];
      if (fresh.length === 0) break;
      fresh.forEach((item) => seen.add(String(item.id)));
      all.push(...fresh);
      after = String(fresh[fresh.length - 1].id);
    }
    return all;
  }

  /** Details at any status; null when the system does not know the id. */
  async getSubmission(id: number | string): Promise<Record<string, unknown> | null> {
    const body = await this.get(`/api/v1/submissions/${encodeURIComponent(String(id))}`, [404]);
    return body === null ? null : this.object(body, 'submission');
  }

  /** Datasets of a submission; null when the system will not serve them at its status (404/409). */
  async getDatasets(id: number | string): Promise<DssDatasetsBody | null> {
    const body = await this.get(
      `/api/v1/submissions/${encodeURIComponent(String(id))}/datasets`,
      [404, 409],
    );
    if (body === null) return null;
    const data = this.listData(body, 'datasets') as Record<string, unknown>[];
    const submission = this.object(body, 'datasets').submission;
    return {
      data,
      submission:
        typeof submission === 'object' && submission !== null
          ? (submission as Record<string, unknown>)
          : undefined,
    };
  }

  private isSummary(item: unknown): item is DssSubmissionSummary {
    const r = item as Record<string, unknown>;
    return (
      typeof r === 'object' &&
      r !== null &&
      (typeof r.id === 'number' || typeof r.id === 'string') &&
      typeof r.ref_name === 'string'
    );
  }

  private object(body: unknown, what: string): Record<string, unknown> {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw this.unavailable(`unexpected ${what} body`);
    return body as Record<string, unknown>;
  }

  private listData(body: unknown, what: string): unknown[] {
    const data = this.object(body, what).data;
    if (!Array.isArray(data)) throw this.unavailable(`unexpected ${what} body: no data list`);
    return data as unknown[];
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
