// The package ships no types; this declares only the part of its API the benchmarks use.
declare module 'autocannon' {
  interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    /** Called before each request is sent; returns the request to send. */
    setupRequest?: (request: AutocannonRequest) => AutocannonRequest;
  }
  interface AutocannonOptions {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    pipelining?: number;
    headers?: Record<string, string>;
    requests?: AutocannonRequest[];
    timeout?: number;
  }
  interface Histogram {
    average: number;
    mean: number;
    p50: number;
    p90: number;
    p99: number;
    max: number;
    min: number;
    total: number;
  }
  interface AutocannonResult {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    latency: Histogram;
    requests: Histogram & { sent: number };
    throughput: Histogram;
  }
  function autocannon(options: AutocannonOptions): Promise<AutocannonResult>;
  export = autocannon;
}
