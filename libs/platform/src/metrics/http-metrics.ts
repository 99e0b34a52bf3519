import { Inject, Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { IncomingMessage, METHODS, ServerResponse } from 'node:http';
import { Counter, Histogram, Registry } from 'prom-client';
import { METRICS_REGISTRY } from './metrics-registry';

/** Route label of requests no route matched (404s, refused before routing): one series, not one per URL. */
export const UNMATCHED_ROUTE = '<unmatched>';
/** Status label of a request whose client went away before the response was complete. */
const CLIENT_CLOSED = '499';

interface RouteLike {
  path?: unknown;
  methods?: Record<string, boolean>;
}

/** Middleware mounted for every path registers a route for every method (or `_all`). */
function isCatchAll(route: RouteLike): boolean {
  const methods = route.methods ?? {};
  return methods._all === true || Object.keys(methods).length >= METHODS.length - 1;
}

/**
 * The route template a request was served by (`/api/termsearch/:category`), never its raw
 * URL: ids in paths would create a series per record. Catch-all routes that middleware
 * registers say nothing about the endpoint and count as unmatched.
 */
export function routeTemplate(req: Pick<Request, 'baseUrl'> & { route?: RouteLike }): string {
  const route = req.route;
  if (!route || typeof route.path !== 'string' || isCatchAll(route)) {
    // A mounted sub-application (the queue dashboard) serves files below its base path.
    return req.baseUrl ? `${req.baseUrl}/*` : UNMATCHED_ROUTE;
  }
  return `${req.baseUrl ?? ''}${route.path}` || '/';
}

/** Request count and latency by method, route template and status, errors included. */
@Injectable()
export class HttpMetrics {
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly duration: Histogram<'method' | 'route' | 'status'>;
  private readonly series = new Map<
    string,
    { duration: { observe(seconds: number): void }; requests: { inc(): void } }
  >();

  constructor(@Inject(METRICS_REGISTRY) registry: Registry) {
    this.requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests served, by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving a request to finishing its response, by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
  }

  /**
   * Express middleware; install it before anything else so requests refused early (body too
   * large, wrong media type) are counted too. The route is read when the response ends,
   * after routing has matched it.
   */
  readonly middleware = (req: Request, res: Response, next: NextFunction): void => {
    this.track(req, res, () => routeTemplate(req));
    next();
  };

  /** Counts one request when its response closes; for paths that answer outside Express too. */
  track(req: IncomingMessage, res: ServerResponse, route: () => string): void {
    const started = performance.now();
    res.once('close', () => this.record(req, res, route(), started));
  }

  /** Counts a request whose response has closed (`started`: performance.now() at its start). */
  record(req: IncomingMessage, res: ServerResponse, route: string, started: number): void {
    const series = this.seriesOf(
      req.method ?? '',
      route,
      res.writableFinished ? String(res.statusCode) : CLIENT_CLOSED,
    );
    series.duration.observe((performance.now() - started) / 1000);
    series.requests.inc();
  }

  /**
   * The labelled children of one (method, route, status), looked up once: resolving labels
   * per observation was a visible share of a cached read's time. Routes are templates and
   * methods and statuses few, so the map stays small.
   */
  private seriesOf(method: string, route: string, status: string) {
    const key = `${method} ${status} ${route}`;
    let series = this.series.get(key);
    if (series === undefined) {
      series = {
        duration: this.duration.labels(method, route, status),
        requests: this.requests.labels(method, route, status),
      };
      this.series.set(key, series);
    }
    return series;
  }
}
