/**
 * The value of the first sample of metric `name` whose labels include all of `labels` (any
 * sample of it when none are given), read from Prometheus text exposition; undefined when absent.
 * Enough for tests of /metrics: no escaping in label values, no exemplars.
 */
export function metricSample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text
    .split('\n')
    .find(
      (l) =>
        (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) &&
        wanted.every((w) => l.includes(w)),
    );
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}
