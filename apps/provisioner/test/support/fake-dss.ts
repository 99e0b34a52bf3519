import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

export interface FakeSubmission {
  id: number;
  ref_name: string;
  status_code: string;
  title?: string;
  local_project_name?: string;
  datasets: { dataset_id: string; title: string; byte_size?: number }[];
}

const SERVED_DATASET_STATUSES = ['data_approval', 'completed'];
const DEFAULT_LIST_STATUSES = ['data_approval', 'completed', 'cancelled'];
const LABELS: Record<string, string> = {
  data_upload: 'Data Upload',
  data_approval: 'Data Verification',
  completed: 'Complete',
  cancelled: 'Cancelled',
};

/**
 * A small stand-in for the submission system's service API (version B of the public code):
 * X-API-Key, repeated `status` filter, `after` keyset paging in id order, {data, count}
 * bodies, {error} errors, 409 for datasets of a submission at a status it does not serve.
 */
export class FakeDss {
  readonly requests: string[] = [];
  /** When set, every request hangs this long before answering (time-out tests). */
  delayMs = 0;
  private server: Server | null = null;

  constructor(
    readonly apiKey: string,
    public submissions: FakeSubmission[],
    private readonly pageSize = 2,
  ) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const respond = () => this.handle(req, res);
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

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    this.requests.push(`${req.method} ${url.pathname}${url.search}`);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.headers['x-api-key'] !== this.apiKey)
      return send(401, { error: 'Invalid or missing API key' });
    const summary = (s: FakeSubmission) => ({
      id: s.id,
      ref_name: s.ref_name,
      status: LABELS[s.status_code] ?? s.status_code,
      status_code: s.status_code,
    });
    const details = (s: FakeSubmission) => ({
      ...summary(s),
      title: s.title,
      local_project_name: s.local_project_name,
      local_custodians: [{ name: 'Steward', email: 's@example.org' }],
    });
    if (url.pathname === '/api/v1/submissions') {
      const unknown = [...url.searchParams.keys()].filter((k) => k !== 'status' && k !== 'after');
      if (unknown.length)
        return send(400, { error: `Unknown query parameters: ${unknown.join(', ')}` });
      const statuses = url.searchParams.getAll('status');
      const wanted = statuses.length ? statuses : DEFAULT_LIST_STATUSES;
      const after = Number(url.searchParams.get('after') ?? 0);
      const page = this.submissions
        .filter((s) => wanted.includes(s.status_code) && s.id > after)
        .sort((a, b) => a.id - b.id)
        .slice(0, this.pageSize)
        .map(summary);
      return send(200, { data: page, count: page.length });
    }
    const match = /^\/api\/v1\/submissions\/(\d+)(\/datasets)?$/.exec(url.pathname);
    const submission = match && this.submissions.find((s) => s.id === Number(match[1]));
    if (!submission) return send(404, { error: 'Submission not found' });
    if (!match[2]) return send(200, details(submission));
    if (!SERVED_DATASET_STATUSES.includes(submission.status_code))
      return send(409, { error: `Submission is in status ${submission.status_code}` });
    return send(200, {
      data: submission.datasets,
      count: submission.datasets.length,
      submission: details(submission),
    });
  }
}
