import { request } from 'node:http';

export interface ProbeAnswer {
  status: number;
  /** From sending the request to the end of the body, as the kubelet times a probe. */
  ms: number;
}

/**
 * One HTTP GET probe made as the kubelet makes it: a new connection each time (its prober's
 * transport disables keep-alive: kubernetes/kubernetes pkg/probe/http/http.go, `NewWithTLSConfig`),
 * the whole body read, and a time-out past which the probe fails. A pooled connection would let a
 * test that stalls its own event loop reuse a socket the server has already closed at its
 * keep-alive time-out ("other side closed"), which no kubelet would see.
 */
export function probeOnce(url: string, timeoutMs: number): Promise<ProbeAnswer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.once('end', () =>
        resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }),
      );
      res.once('error', reject);
    });
    req.once('timeout', () => req.destroy(new Error(`${url}: no answer within ${timeoutMs} ms`)));
    req.once('error', reject);
    req.end();
  });
}
