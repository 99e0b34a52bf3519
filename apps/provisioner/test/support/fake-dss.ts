import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/**
 * The two versions of the submission system's service API in use, both in
 * elixir-luxembourg/dss `elixir_dss/controllers/api_controllers.py`:
 * - `comma`: the stored version (file id 62144013289 in the code index) whose list reads
 *   `request.args.get("status")` split on commas (so of a repeated `status` only the first
 *   counts), allows only data_approval and completed (default: completed), ignores other
 *   parameters, answers everything at once, has `GET /submissions/<id>` -> `{data: details}`
 *   and answers 404 `{error: "Submission is not found"}` for datasets at other statuses. Its
 *   tests: `tests/test_api_controllers.py` at 06a0a245b34acdea74ed36c3631cfa70c1d382e3.
 * - `paged`: commit 1b26d9dda249582d9c612422a33729f2a95064b6, whose list reads
 *   `request.args.getlist("status")` (any status name, default data_approval, completed,
 *   cancelled), refuses parameters other than status and after with 400, pages by
 *   `after` (`type=int`: unparseable means 0) in id order, puts the details in the list entries
 *   of the statuses it serves, has no single-submission route and answers 409 for datasets at
 *   other statuses.
 * In both, a URL no route matches (and, in `comma`, an unknown id) gets the application's HTML
 * 404 page (`elixir_dss/controllers/errors.py`); the submission title is never sent;
 * `byte_size` is a text column (`elixir_dss/models/submission.py`), so a string or null.
 */
export type DssApiVersion = 'comma' | 'paged';

export interface FakeDataset {
  dataset_id: string;
  title: string;
  /** As stored: text, or null. */
  byte_size?: string | null;
}

export interface FakeSubmission {
  id: number;
  ref_name: string;
  status_code: StatusCode;
  local_project_name?: string;
  datasets: FakeDataset[];
}

/** `SubmissionStatusEnum` names with the labels `tests/test_api_controllers.py` expects. */
const LABELS = {
  draft: 'Initiation',
  metadata_submission: 'Metadata Entry',
  metadata_approval: 'Metadata Review',
  data_upload: 'Data Upload',
  data_approval: 'Data Verification',
  completed: 'Complete',
  cancelled: 'Cancelled',
} as const;
export type StatusCode = keyof typeof LABELS;
const STATUS_NAMES = Object.keys(LABELS) as StatusCode[];

/** Statuses whose details and datasets each version serves. */
const SERVED: Record<DssApiVersion, StatusCode[]> = {
  comma: ['data_approval', 'completed'],
  paged: ['data_approval', 'completed', 'cancelled'],
};
const DEFAULT_LISTED: Record<DssApiVersion, StatusCode[]> = {
  comma: ['completed'],
  paged: ['data_approval', 'completed', 'cancelled'],
};
/** werkzeug's NotFound description, which the paged version's JSON error handler returns. */
const NOT_FOUND_DESCRIPTION =
  'The requested URL was not found on the server. If you entered the URL manually please ' +
  'check your spelling and try again.';

/**
 * Deliberate departures from the real code, for the tests of what our client does when a
 * server misbehaves. Off by default.
 */
export interface FakeDssFaults {
  /** List entries of every status, whatever the filter. */
  ignoreStatus?: boolean;
  /** (paged) Answer the first page again whatever the cursor. */
  ignoreAfter?: boolean;
  /** Add this to every list `count`. */
  countOffset?: number;
  /** Rewrite the entries of every list answer (its `count` follows). */
  rewriteEntries?: (entries: Record<string, unknown>[]) => unknown[];
}

type Query = [string, string][];

class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly html = false,
  ) {}
}

const json = (status: number, body: unknown) => new Reply(status, body);
const error = (status: number, message: string) => json(status, { error: message });
const htmlNotFound = () => new Reply(404, '<h1>Error 404 - Page not found</h1>', true);

/** A first `status` value as `request.args.get` returns it, split and stripped as `_statuses`. */
function commaStatuses(query: Query): StatusCode[] | Reply {
  const raw = query.find(([key]) => key === 'status')?.[1];
  if (!raw) return DEFAULT_LISTED.comma;
  const names = raw.split(',').map((name) => name.trim());
  if (names.some((name) => !(SERVED.comma as string[]).includes(name)))
    return error(400, `Unknown status, allowed: ${[...SERVED.comma].sort().join(', ')}`);
  return names as StatusCode[];
}

/** `requested_statuses(request.args.getlist("status"))`. */
function repeatedStatuses(query: Query): StatusCode[] | Reply {
  const names = query.filter(([key]) => key === 'status').map(([, value]) => value);
  if (names.length === 0) return DEFAULT_LISTED.paged;
  if (names.some((name) => !(STATUS_NAMES as string[]).includes(name)))
    return error(400, `Unknown status. Allowed: ${STATUS_NAMES.join(', ')}`);
  return names as StatusCode[];
}

/** `request.args.get("after", 0, type=int)`: Python's int() of the first value, else 0. */
function afterCursor(query: Query): number {
  const raw = query.find(([key]) => key === 'after')?.[1];
  if (raw === undefined || !/^\s*[+-]?\d+(_\d+)*\s*$/.test(raw)) return 0;
  return Number(raw.replace(/_/g, ''));
}

/** A stand-in for the submission system's service API, in either version (see above). */
export class FakeDss {
  readonly requests: string[] = [];
  /** When set, every request hangs this long before answering (time-out tests). */
  delayMs = 0;
  faults: FakeDssFaults = {};
  private server: Server | null = null;

  constructor(
    readonly version: DssApiVersion,
    readonly apiKey: string,
    public submissions: FakeSubmission[],
    /** `API_PAGE_SIZE` of the paged version. */
    private readonly pageSize = 2,
  ) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const respond = () => this.send(res, this.handle(req));
      if (this.delayMs > 0) setTimeout(respond, this.delayMs);
      else respond();
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The list requests received so far, as `path?query`. */
  listRequests(): string[] {
    return this.requests
      .filter((r) => /^GET \/api\/v1\/submissions(\?|$)/.test(r))
      .map((r) => r.slice(4));
  }

  private send(res: ServerResponse, reply: Reply): void {
    res.writeHead(reply.status, {
      'Content-Type': reply.html ? 'text/html; charset=utf-8' : 'application/json',
    });
    res.end(reply.html ? String(reply.body) : JSON.stringify(reply.body));
  }

  private handle(req: IncomingMessage): Reply {
    const url = new URL(req.url ?? '/', 'http://fake');
    this.requests.push(`${req.method} ${url.pathname}${url.search}`);
    const query: Query = [...url.searchParams.entries()];
    const route = this.route(url.pathname);
    if (route === null) return htmlNotFound();
    if (req.method !== 'GET') return new Reply(405, '<h1>Method Not Allowed</h1>', true);
    if (route.kind === 'healthz' && this.version === 'paged') return json(200, { status: 'ok' });
    if (req.headers['x-api-key'] !== this.apiKey) return error(401, 'Invalid or missing API key');
    if (route.kind === 'list') return this.list(query);
    if (route.kind === 'healthz') return json(200, { status: 'ok' });
    const submission = this.submissions.find((s) => s.id === route.id);
    if (route.kind === 'one')
      return submission ? json(200, { data: this.details(submission) }) : htmlNotFound();
    return this.datasets(submission);
  }

  /** Werkzeug routing: `<int:submission_id>` matches digits only; the versions' route tables. */
  private route(
    path: string,
  ):
    | { kind: 'healthz' }
    | { kind: 'list' }
    | { kind: 'one'; id: number }
    | { kind: 'datasets'; id: number }
    | null {
    if (path === '/api/v1/healthz') return { kind: 'healthz' };
    if (path === '/api/v1/submissions') return { kind: 'list' };
    const match = /^\/api\/v1\/submissions\/(\d+)(\/datasets)?$/.exec(path);
    if (!match) return null;
    if (!match[2] && this.version === 'paged') return null;
    return match[2]
      ? { kind: 'datasets', id: Number(match[1]) }
      : { kind: 'one', id: Number(match[1]) };
  }

  private list(query: Query): Reply {
    let statuses: StatusCode[];
    let after = 0;
    if (this.version === 'paged') {
      if (query.some(([key]) => key !== 'status' && key !== 'after'))
        return error(400, 'Unknown parameter. Allowed: status, after');
      const parsed = repeatedStatuses(query);
      if (parsed instanceof Reply) return parsed;
      statuses = parsed;
      after = this.faults.ignoreAfter ? 0 : afterCursor(query);
    } else {
      const parsed = commaStatuses(query);
      if (parsed instanceof Reply) return parsed;
      statuses = parsed;
    }
    let listed = this.submissions
      .filter((s) => (this.faults.ignoreStatus || statuses.includes(s.status_code)) && s.id > after)
      .sort((a, b) => a.id - b.id);
    if (this.version === 'paged') listed = listed.slice(0, this.pageSize);
    const entries = listed.map((s): Record<string, unknown> =>
      this.version === 'paged' && SERVED.paged.includes(s.status_code)
        ? this.details(s)
        : this.summary(s),
    );
    const data = this.faults.rewriteEntries?.(entries) ?? entries;
    return json(200, { data, count: data.length + (this.faults.countOffset ?? 0) });
  }

  private datasets(submission: FakeSubmission | undefined): Reply {
    if (!submission)
      return this.version === 'paged' ? error(404, NOT_FOUND_DESCRIPTION) : htmlNotFound();
    if (!SERVED[this.version].includes(submission.status_code))
      return this.version === 'paged'
        ? error(409, `Submission is at ${LABELS[submission.status_code]} status`)
        : error(404, 'Submission is not found');
    const data = submission.datasets.map((d) => ({
      dataset_id: d.dataset_id,
      title: d.title,
      description: `About ${d.title}`,
      byte_size: d.byte_size ?? null,
      number_of_records: null,
    }));
    return json(200, { data, count: data.length, submission: this.details(submission) });
  }

  private summary(s: FakeSubmission) {
    return {
      id: s.id,
      ref_name: s.ref_name,
      status: LABELS[s.status_code],
      status_code: s.status_code,
    };
  }

  private details(s: FakeSubmission) {
    return {
      ...this.summary(s),
      local_project_name: s.local_project_name ?? null,
      local_custodians: [{ name: 'Jane Roe', email: 'jane.roe@example.org' }],
      access: [
        { role: 'recipient', first_name: 'Rui', last_name: 'Ng', email: 'rui.ng@example.org' },
      ],
      attachments: [],
    };
  }
}
