import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { parse, stringify } from 'yaml';
import { CatalogTestApp, startCatalogApp, TEST_GLOBAL_KEY } from '../support/catalog-app';
import { renderKustomization } from '../support/kustomize';
import {
  queueEnv,
  startProvisionerApps,
  TEST_READ_KEY,
  type ProvisionerTestApps,
} from '../support/provisioner-app';
import { APP_START_MS } from '../support/timeouts';
import { poll } from '../support/wait';

/**
 * The prometheus-operator component's alerts and the keda component's scaling queries, evaluated
 * by Prometheus's own engine (`promtool test rules`, Debian's prometheus 2.42) over the series the
 * services really expose. catalog-api, the provisioner API and a worker run here; their /metrics
 * are scraped, and every scraped series (name, labels and value as scraped, plus the labels a
 * ServiceMonitor adds; the worker's three times, as three pods) is promtool's input. Each
 * scenario then moves only the series its alert watches, and every alert is checked in every
 * scenario: the one meant to fire fires with its labels, the others stay silent. A rule naming a
 * metric or label the services do not expose never fires, so the test fails. One label value is
 * made up: a 500 status, copied from a real request series (the services answer no 500 on demand).
 */

const ROOT = join(__dirname, '../..');
const NAMESPACE = 'research-data';
const STEP_AT = 100; // minutes: when a scenario's series change
const EVAL_AT = '110m'; // after every rule's `for` and inside every rate window

interface Series {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text exposition as series (no exemplars; label values as exposed, unescaped). */
function parseExposition(text: string, target: Record<string, string>): Series[] {
  const series: Series[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`unparsed exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g))
      labels[key] = value.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    const value = Number(match[3]);
    if (Number.isFinite(value))
      series.push({ name: match[1], labels: { ...labels, ...target }, value });
  }
  return series;
}

const escapeLabel = (v: string) =>
  v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const seriesText = (s: Series) =>
  `${s.name}{${Object.entries(s.labels)
    .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
    .join(',')}}`;
const matches = (s: Series, name: string, labels: Record<string, string> = {}) =>
  s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v);

const series = (name: string, labels: Record<string, string>) => (s: Series) =>
  matches(s, name, labels);

/** promtool's expanding notation: `value` until STEP_AT, then `after` (or growing by `slope`). */
const constant = (v: number) => `${v}x${EVAL_MINUTES}`;
const EVAL_MINUTES = 120;
const stepTo = (before: number, after: number) =>
  `${before}x${STEP_AT - 1} ${after}x${EVAL_MINUTES - STEP_AT}`;

interface Scenario {
  name: string;
  /** The series it moves: their promtool values instead of constant ones. */
  move: (s: Series) => string | undefined;
  /** Series it adds (derived from scraped ones). */
  add?: (all: Series[]) => { series: Series; values: string }[];
  /** The alert that must fire, with its labels (besides alertname); none: nothing fires. */
  fires?: { alertname: string; labels: Record<string, string> };
}

let catalog: CatalogTestApp;
let provisioner: ProvisionerTestApps;
let scraped: Series[];
let dir: string;
const promtool = execFileSync(join(ROOT, 'scripts/prometheus/promtool.sh'), {
  encoding: 'utf8',
}).trim();

// The rules and the scaling queries as an overlay renders them (kustomize fills in the namespace
// and the runbook address): the documented site overlay, in NAMESPACE.
const site = renderKustomization(join(ROOT, 'k8s/examples/site'));
const rendered = (kind: string) =>
  site.find((o) => o.kind === kind && o.metadata.namespace === NAMESPACE) as unknown;
const alertsFile = rendered('PrometheusRule') as {
  spec: { groups: { name: string; rules: Record<string, unknown>[] }[] };
};
const alertNames = alertsFile.spec.groups.flatMap((g) => g.rules.map((r) => String(r.alert)));
const scaledObject = rendered('ScaledObject') as {
  spec: { triggers: { name: string; metadata: { query: string } }[] };
};
const kedaQuery = (name: string) =>
  scaledObject.spec.triggers.find((t) => t.name === name)!.metadata.query;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'alert-rules-'));
  [catalog, provisioner] = await Promise.all([
    startCatalogApp({ ACCESSREQ_INTEGRATION_ENABLED: 'true' }),
    queueEnv().then(startProvisionerApps),
  ]);
  // Traffic, so the request counters have series as in production.
  await request(catalog.server).get('/api/datasets').set('X-API-Key', TEST_GLOBAL_KEY).expect(200);
  await request(catalog.server).get('/api/no-such-route').expect(404);
  const api = request(provisioner.api.getHttpServer());
  await api.get('/imports').set('X-API-Key', TEST_READ_KEY).expect(200);
  const scrape = async (server: Parameters<typeof request>[0], target: Record<string, string>) =>
    parseExposition((await request(server).get('/metrics').expect(200)).text, {
      namespace: NAMESPACE,
      ...target,
    });
  // A healthy moment, as the baseline: on a busy machine a process just started may report a
  // queue count that timed out (2 s) or a connection still opening; Prometheus's next scrape
  // would see them up, so the scrape is repeated until every queue answered and every worker
  // connection is up (a bounded wait; a lasting fault fails here, naming the series).
  let unhealthy: Series[] = [];
  const scrapeHealthy = async (server: Parameters<typeof request>[0]) =>
    poll(
      async () => {
        const found = await scrape(server, {});
        unhealthy = found.filter(
          (s) =>
            (s.name === 'provisioner_queue_up' || s.name === 'provisioner_queue_worker_connected') &&
            s.value !== 1,
        );
        return unhealthy.length === 0 ? found : undefined;
      },
      'queues and worker connections up',
      APP_START_MS / 2,
      200,
    ).catch((error: Error) => {
      throw new Error(`${error.message}: ${unhealthy.map(seriesText).join(', ')}`);
    });
  const worker = await scrapeHealthy(provisioner.worker.getHttpServer());
  const provisionerApi = await scrapeHealthy(provisioner.api.getHttpServer());
  scraped = [
    ...(await scrape(catalog.server, { job: 'catalog-api', pod: 'catalog-api-0' })),
    ...provisionerApi.map((s) => ({
      ...s,
      labels: { ...s.labels, job: 'provisioner-api', pod: 'provisioner-api-0' },
    })),
    ...[0, 1, 2].flatMap((i) =>
      worker.map((s) => ({
        ...s,
        labels: { ...s.labels, job: 'provisioner-worker', pod: `provisioner-worker-${i}` },
      })),
    ),
  ];
  // The free space of the disk the test runs on is the machine's, not the services' state: the
  // baseline has half of each storage free (the storage scenario moves it below 10 %).
  for (const s of scraped)
    if (s.name === 'provisioner_storage_free_bytes')
      s.value = Math.floor(
        scraped.find(series('provisioner_storage_size_bytes', { pod: s.labels.pod }))!.value / 2,
      );
  // What Prometheus records of each scrape itself: `up`, 1 for a target that answered.
  const targets = new Map(scraped.map((s) => [`${s.labels.job}/${s.labels.pod}`, s.labels]));
  for (const labels of targets.values())
    scraped.push({
      name: 'up',
      labels: { namespace: NAMESPACE, job: labels.job, pod: labels.pod },
      value: 1,
    });
}, APP_START_MS);

afterAll(async () => {
  await Promise.all([catalog?.close(), provisioner?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs promtool on a test file of the given groups; returns its output, throws on failure. */
function promtoolTest(tests: object[]): string {
  // The expressions are under test, not the annotations' wording (checked by `check rules`).
  const rules = {
    groups: alertsFile.spec.groups.map((g) => ({
      ...g,
      rules: g.rules.map((r) => ({ ...r, annotations: undefined })),
    })),
  };
  writeFileSync(join(dir, 'rules.yaml'), stringify(rules));
  writeFileSync(
    join(dir, 'tests.yaml'),
    stringify({ rule_files: ['rules.yaml'], evaluation_interval: '1m', tests }),
  );
  const run = spawnSync(promtool, ['test', 'rules', 'tests.yaml'], { cwd: dir, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`promtool test rules failed:\n${run.stdout}${run.stderr}`);
  return run.stdout;
}

function inputSeries(scenario: Scenario) {
  return [
    ...scraped.map((s) => ({
      series: seriesText(s),
      values: scenario.move(s) ?? constant(s.value),
    })),
    ...(scenario.add?.(scraped) ?? []).map(({ series, values }) => ({
      series: seriesText(series),
      values,
    })),
  ];
}

function alertTest(scenario: Scenario) {
  return {
    name: scenario.name,
    interval: '1m',
    input_series: inputSeries(scenario),
    alert_rule_test: alertNames.map((alertname) => ({
      eval_time: EVAL_AT,
      alertname,
      exp_alerts:
        scenario.fires?.alertname === alertname ? [{ exp_labels: scenario.fires.labels }] : [],
    })),
  };
}

it('finds the services exposing every metric the rules and queries name', () => {
  const names = new Set(scraped.map((s) => s.name));
  for (const name of [
    'provisioner_queue_jobs',
    'provisioner_queue_up',
    'provisioner_imports_total',
    'provisioner_catalog_registrations_total',
    'catalog_access_request_refusals_total',
    'http_requests_total',
    'provisioner_import_bytes_total',
    'provisioner_import_files_total',
    'provisioner_queue_worker_connected',
    'provisioner_storage_free_bytes',
    'provisioner_storage_size_bytes',
  ])
    expect({ name, exposed: names.has(name) }).toEqual({ name, exposed: true });
  expect(
    scraped.filter(series('provisioner_queue_jobs', { queue: 'catalog-registration' })).length,
  ).toBeGreaterThan(0);
});

it('passes promtool check rules: the PrometheusRule with its annotations', () => {
  writeFileSync(join(dir, 'full-rules.yaml'), stringify({ groups: alertsFile.spec.groups }));
  const run = spawnSync(promtool, ['check', 'rules', 'full-rules.yaml'], {
    cwd: dir,
    encoding: 'utf8',
  });
  expect({ status: run.status, out: `${run.stdout}${run.stderr}` }).toMatchObject({ status: 0 });
  expect(run.stdout).toContain(`${alertNames.length} rules found`);
});

it("fires each alert on its condition over the services' real series, and no other", () => {
  const scenarios: Scenario[] = [
    { name: 'as scraped: nothing fires', move: () => undefined },
    {
      // The workers busy copying (bytes move), yet more imports wait every minute.
      name: 'imports waiting, more and more',
      move: (s) =>
        matches(s, 'provisioner_queue_jobs', { queue: 'imports', state: 'waiting' })
          ? `0+1x${EVAL_MINUTES}`
          : matches(s, 'provisioner_queue_jobs', { queue: 'imports', state: 'active' })
            ? constant(2)
            : matches(s, 'provisioner_import_bytes_total', { pod: 'provisioner-worker-0' })
              ? `0+1000000x${EVAL_MINUTES}`
              : undefined,
      fires: {
        alertname: 'ImportBacklogGrowing',
        labels: { namespace: NAMESPACE, severity: 'warning' },
      },
    },
    {
      name: 'an import failed',
      move: (s) =>
        matches(s, 'provisioner_imports_total', {
          outcome: 'failed',
          pod: 'provisioner-worker-1',
        })
          ? stepTo(s.value, s.value + 1)
          : undefined,
      fires: { alertname: 'ImportFailed', labels: { namespace: NAMESPACE, severity: 'warning' } },
    },
    {
      name: 'registrations delayed for an hour (the catalog is down)',
      move: (s) =>
        matches(s, 'provisioner_queue_jobs', { queue: 'catalog-registration', state: 'delayed' })
          ? constant(3)
          : undefined,
      fires: {
        alertname: 'CatalogRegistrationBacklog',
        labels: { namespace: NAMESPACE, severity: 'warning' },
      },
    },
    {
      name: 'a registration given up',
      move: (s) =>
        matches(s, 'provisioner_catalog_registrations_total', {
          outcome: 'gave_up',
          pod: 'provisioner-worker-0',
        })
          ? stepTo(s.value, s.value + 1)
          : undefined,
      fires: {
        alertname: 'CatalogRegistrationAbandoned',
        labels: { namespace: NAMESPACE, outcome: 'gave_up', severity: 'warning' },
      },
    },
    {
      name: 'a REMS delivery refused',
      move: (s) =>
        s === scraped.find(series('catalog_access_request_refusals_total', {}))
          ? stepTo(s.value, s.value + 1)
          : undefined,
      fires: {
        alertname: 'AccessRequestRefused',
        labels: {
          namespace: NAMESPACE,
          route: scraped.find(series('catalog_access_request_refusals_total', {}))!.labels.route,
          reason: scraped.find(series('catalog_access_request_refusals_total', {}))!.labels.reason,
          severity: 'warning',
        },
      },
    },
    {
      name: 'one request in ten of catalog-api answered 500',
      move: (s) =>
        s === scraped.find(series('http_requests_total', { app: 'catalog-api', status: '200' }))
          ? `0+9x${EVAL_MINUTES}`
          : undefined,
      add: (all) => {
        const ok = all.find(series('http_requests_total', { app: 'catalog-api', status: '200' }))!;
        return [
          {
            series: { ...ok, labels: { ...ok.labels, status: '500' } },
            values: `0+1x${EVAL_MINUTES}`,
          },
        ];
      },
      fires: {
        alertname: 'HighServerErrorRate',
        labels: { namespace: NAMESPACE, app: 'catalog-api', severity: 'critical' },
      },
    },
    {
      name: "a worker's queue backend stops answering",
      move: (s) =>
        matches(s, 'provisioner_queue_up', { queue: 'imports', pod: 'provisioner-worker-2' })
          ? stepTo(1, 0)
          : undefined,
      fires: {
        alertname: 'QueueBackendDown',
        labels: { namespace: NAMESPACE, severity: 'critical' },
      },
    },
    {
      name: 'no pod of catalog-api answers its scrape',
      move: (s) => (matches(s, 'up', { job: 'catalog-api' }) ? stepTo(1, 0) : undefined),
      fires: {
        alertname: 'ServiceDown',
        labels: { namespace: NAMESPACE, job: 'catalog-api', severity: 'critical' },
      },
    },
    {
      // The Deployment gone: none of its series, `up` included, is there at all.
      name: 'provisioner-api not scraped at all',
      move: (s) => (s.labels.job === 'provisioner-api' ? `_x${EVAL_MINUTES}` : undefined),
      fires: {
        alertname: 'ServiceTargetsMissing',
        labels: { namespace: NAMESPACE, job: 'provisioner-api', severity: 'critical' },
      },
    },
    {
      name: 'an import running, no byte or file copied for half an hour',
      move: (s) =>
        matches(s, 'provisioner_queue_jobs', { queue: 'imports', state: 'active' })
          ? constant(1)
          : undefined,
      fires: {
        alertname: 'ImportStalled',
        labels: { namespace: NAMESPACE, severity: 'warning' },
      },
    },
    {
      name: 'storage 95 % full',
      move: (s) => {
        if (!matches(s, 'provisioner_storage_free_bytes')) return undefined;
        const size = scraped.find(
          series('provisioner_storage_size_bytes', { pod: s.labels.pod }),
        )!.value;
        return constant(Math.floor(size * 0.05));
      },
      fires: {
        alertname: 'StorageSpaceLow',
        labels: { namespace: NAMESPACE, severity: 'warning' },
      },
    },
    {
      name: "a worker's imports queue connection lost",
      move: (s) =>
        matches(s, 'provisioner_queue_worker_connected', {
          queue: 'imports',
          pod: 'provisioner-worker-1',
        })
          ? stepTo(1, 0)
          : undefined,
      fires: {
        alertname: 'WorkerDisconnected',
        labels: {
          namespace: NAMESPACE,
          pod: 'provisioner-worker-1',
          queue: 'imports',
          severity: 'warning',
        },
      },
    },
    {
      name: 'imports waiting, none running',
      move: (s) =>
        matches(s, 'provisioner_queue_jobs', { queue: 'imports', state: 'waiting' })
          ? constant(3)
          : undefined,
      fires: {
        alertname: 'ImportsWaitingNoneTaken',
        labels: { namespace: NAMESPACE, severity: 'critical' },
      },
    },
  ];
  promtoolTest(scenarios.map(alertTest));
});

it('gives every alert a runbook_url into its section of docs/operations.md', () => {
  const docs = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
  // GitHub's heading anchors: lower case, punctuation dropped, spaces as dashes.
  const anchors = new Set(
    [...docs.matchAll(/^#{2,4} (.+)$/gm)].map((m) =>
      m[1]
        .toLowerCase()
        .replace(/[^a-z0-9 -]/g, '')
        .replace(/ /g, '-'),
    ),
  );
  const runbooks = alertsFile.spec.groups.flatMap((g) =>
    g.rules.map((r) => ({
      alert: String(r.alert),
      runbook: String((r.annotations as Record<string, string>).runbook_url),
    })),
  );
  // The site's copy of docs/operations.md, from its parameters.
  const { runbookUrl } = (
    parse(
      readFileSync(join(ROOT, 'k8s/examples/site/prometheus-operator-parameters.yaml'), 'utf8'),
    ) as { data: { runbookUrl: string } }
  ).data;
  expect(runbookUrl).toMatch(/\/docs\/operations\.md$/);
  expect(runbooks.length).toBe(alertNames.length);
  for (const { alert, runbook } of runbooks) {
    const [document, anchor] = runbook.split('#');
    expect({ alert, document, known: anchors.has(anchor) }).toEqual({
      alert,
      document: runbookUrl,
      known: true,
    });
  }
});

it("ships a Grafana dashboard whose every query parses and names only the services' metrics", () => {
  const dashboard = JSON.parse(
    readFileSync(
      join(ROOT, 'k8s/components/prometheus-operator/research-data-dashboard.json'),
      'utf8',
    ),
  ) as { uid: string; panels: { title: string; targets: { expr: string }[] }[] };
  expect(dashboard.uid).toBe('research-data-services');
  const queries = dashboard.panels.flatMap((panel) =>
    panel.targets.map((target) => ({ title: panel.title, expr: target.expr })),
  );
  expect(queries.length).toBeGreaterThanOrEqual(10);
  // promtool parses each (as a recording rule, the dashboard variable set to a namespace).
  writeFileSync(
    join(dir, 'dashboard-rules.yaml'),
    stringify({
      groups: [
        {
          name: 'dashboard',
          rules: queries.map((q, i) => ({
            record: `dashboard:panel_${i}`,
            expr: q.expr.replace(/\$namespace/g, NAMESPACE),
          })),
        },
      ],
    }),
  );
  const run = spawnSync(promtool, ['check', 'rules', 'dashboard-rules.yaml'], {
    cwd: dir,
    encoding: 'utf8',
  });
  expect({ status: run.status, out: `${run.stdout}${run.stderr}` }).toMatchObject({ status: 0 });
  const exposed = new Set(scraped.map((s) => s.name));
  const named = queries.flatMap(({ title, expr }) =>
    [...expr.matchAll(/\b([a-z_]+_[a-z_]+|up)\{/g)].map((m) => ({ title, metric: m[1] })),
  );
  expect(named.length).toBeGreaterThanOrEqual(queries.length);
  // Histograms are exposed as their _bucket series.
  expect(named.filter(({ metric }) => !exposed.has(metric))).toEqual([]);
});

it('scales workers on waiting imports and never below the workers while an import runs', () => {
  const queue = (state: string, value: number) => (s: Series) =>
    matches(s, 'provisioner_queue_jobs', { queue: 'imports', state }) ? constant(value) : undefined;
  const both =
    (a: (s: Series) => string | undefined, b: (s: Series) => string | undefined) => (s: Series) =>
      a(s) ?? b(s);
  const expect = (expr: string, value: number) => ({
    expr,
    eval_time: EVAL_AT,
    exp_samples: [{ labels: '{}', value }],
  });
  const toRun = kedaQuery('imports-to-run');
  const copying = kedaQuery('workers-copying');
  const test = (name: string, move: Scenario['move'], run: number, hold: number) => ({
    name,
    interval: '1m',
    input_series: inputSeries({ name, move }),
    promql_expr_test: [expect(toRun, run), expect(copying, hold)],
  });
  promtoolTest([
    // 5 waiting + 2 running = 7 to run; 2 running on three workers: keep the three.
    test('busy', both(queue('waiting', 5), queue('active', 2)), 7, 3),
    // Only waiting imports: scale by them; nothing runs, so scale-in is free.
    test('waiting only', both(queue('waiting', 4), queue('active', 0)), 4, 0),
    // One import still copying, nothing waiting: the three workers stay.
    test('draining', both(queue('waiting', 0), queue('active', 1)), 1, 3),
    test('idle', both(queue('waiting', 0), queue('active', 0)), 0, 0),
  ]);
});
