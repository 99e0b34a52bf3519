import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Counter, Gauge, type Registry } from 'prom-client';
import { IpAllowList, resolveClientIp, throttleKeyOf } from '@app/auth';
import { AppError, RateLimitedError } from '@app/errors';

export interface SlowReaderBounds {
  /**
   * An answer whose client has taken no byte of it for this long is cut (its connection
   * closed). Node resets the clock whenever the kernel takes more of the answer, and looks
   * once a period, so the cut comes within twice this.
   */
  stallTimeoutMs: number;
  /** Answers being sent to one client (IPv4 address, IPv6 /64) at once; a further request: 429. */
  perClient: number;
  /** Answers being sent at once, all clients together; a further request: 503. */
  total: number;
  trustedProxies: IpAllowList;
  /** Paths never refused (health probes, metrics): they are tiny and must keep answering. */
  exempt: string[];
  /**
   * What the answers admitted with a weight (`admitStreamedAnswer`) may hold together, in the
   * unit their caller weighs them in (a DCAT page: its datasets); one more that would pass it
   * is refused (503) unless none is held. Unbounded when absent.
   */
  maxHeldWeight?: number;
}

const ADMISSION = Symbol('slow-readers admission');
const WEIGHING = Symbol('slow-readers weighing');
/** The request's client as the bounds count it, worked out once (refusal and count both ask). */
const CLIENT = Symbol('slow-readers client');
type Admittable = IncomingMessage & {
  [ADMISSION]?: () => void;
  [WEIGHING]?: (weight: number) => void;
  [CLIENT]?: string;
};

/**
 * For an answer that holds memory of its own from before its first byte (a DCAT page, read at the
 * database's pace and held until its client has taken it), before it reads: refuses it as a new request would be refused
 * (429, 503), or when held answers already hold all they may (`maxHeldWeight`); else counts it
 * as being sent from now on. A request the bounds do not watch passes.
 */
export function admitStreamedAnswer(req: IncomingMessage): void {
  (req as Admittable)[ADMISSION]?.();
}

/**
 * Before its first byte, what an admitted answer holds until its last, in its caller's unit: refused (503) when
 * it would take what the answers being sent hold past `maxHeldWeight` (unless it is alone),
 * else held until its client has taken it.
 */
export function weighStreamedAnswer(req: IncomingMessage, weight: number): void {
  (req as Admittable)[WEIGHING]?.(weight);
}

/** How long a refused client is asked to wait: the time its slowest answer may still take. */
const retryAfterSeconds = (bounds: SlowReaderBounds) =>
  Math.max(1, Math.ceil(Math.min(bounds.stallTimeoutMs, 30_000) / 1000));

/**
 * What slow readers can hold. An answer is *being sent* from its first byte until it is
 * finished or its connection closes; a client that reads slowly, or not at all, keeps its
 * answers in that state, each holding its socket and the memory of what is left to send (never
 * the database: streamed answers are read at the database's pace, not the client's). Three
 * bounds: a stalled answer is cut after `stallTimeoutMs`; a client with `perClient` answers
 * being sent gets 429 for more, and all clients together at most `total` (503), except on the
 * exempt paths. An answer that fits the socket's buffers is finished at once and counts for
 * no time at all, so only answers a client leaves unread count. An answer whose memory is its
 * own from before its first byte (`admitStreamedAnswer`) counts from its admission, so a burst
 * of them cannot all be read before any is counted.
 */
export class SlowReaders {
  private readonly byClient = new Map<string, number>();
  private sending = 0;
  /** The weight the admitted answers being sent hold together. */
  private held = 0;
  private readonly gauge: Gauge;
  private readonly heldGauge: Gauge;
  private readonly cut: Counter;

  constructor(
    private readonly bounds: SlowReaderBounds,
    registry: Registry,
    private readonly warn: (message: string) => void,
  ) {
    this.gauge = new Gauge({
      name: 'http_responses_sending',
      help: 'Answers whose first byte is sent and whose last is not yet taken by the client',
      registers: [registry],
    });
    this.heldGauge = new Gauge({
      name: 'http_responses_held_weight',
      help: 'What the answers being sent hold before their first byte, in their own unit (DCAT: datasets)',
      registers: [registry],
    });
    this.cut = new Counter({
      name: 'http_responses_stalled_total',
      help: 'Answers cut because their client took none of it for SLOW_READER_TIMEOUT_MS',
      registers: [registry],
    });
  }

  /**
   * Follows every answer of `server`, the fast path in front of Express included. Call it once
   * the server's other request listeners are in place: it goes in front of them.
   */
  watch(server: Server): void {
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) =>
      this.follow(req, res),
    );
  }

  /** Refuses a request while its client, or everyone, has too many answers being sent. */
  refuseWhenBusy(): RequestHandler {
    return (req: Request, _res: Response, next: NextFunction) => next(this.refusal(req));
  }

  /** Why `req` is refused now, if it is. */
  refusal(req: IncomingMessage): AppError | undefined {
    // Fewer answers being sent than either bound: neither can refuse (a client's are some of
    // them), so the client need not be worked out (every request asks, most while none is).
    if (this.sending < this.bounds.perClient && this.sending < this.bounds.total) return undefined;
    const path = (req.url ?? '').split('?', 1)[0];
    if (this.bounds.exempt.includes(path)) return undefined;
    if ((this.byClient.get(this.clientOf(req)) ?? 0) >= this.bounds.perClient)
      return new RateLimitedError(
        retryAfterSeconds(this.bounds),
        `${this.bounds.perClient} answers to this client are still being sent; read them first`,
      );
    if (this.sending >= this.bounds.total)
      return new AppError(
        503,
        'busy',
        'Too many answers are still being sent to slow clients; retry later',
        {},
        { 'Retry-After': String(retryAfterSeconds(this.bounds)) },
      );
    return undefined;
  }

  private clientOf(req: IncomingMessage): string {
    // A request's address and X-Forwarded-For do not change while it is answered.
    return ((req as Admittable)[CLIENT] ??= throttleKeyOf(
      resolveClientIp(
        req.socket.remoteAddress,
        req.headers['x-forwarded-for'],
        this.bounds.trustedProxies,
      ),
    ));
  }

  /**
   * Counts the answer from its first byte (its head) until it ends, however it ends; or from
   * its admission, for an answer that holds memory of its own before it starts (see
   * `admitStreamedAnswer`).
   */
  private follow(req: IncomingMessage, res: ServerResponse): void {
    let counted = false;
    let weighed = 0;
    const count = () => {
      if (counted) return;
      counted = true;
      this.count(this.clientOf(req), res, () => weighed);
    };
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
    res.writeHead = ((...args: unknown[]) => {
      res.writeHead = writeHead as ServerResponse['writeHead'];
      count();
      // An answer that has no body (304, 204) is its head, taken by the kernel at once: no
      // stall to cut, and arming the socket's timer was a quarter of a fast 304's time.
      if (args[0] !== 304 && args[0] !== 204) this.cutWhenStalled(req, res);
      // eslint-disable-next-line no-restricted-syntax -- writeHead's own arguments (at most three)
      return writeHead(...args);
    }) as ServerResponse['writeHead'];
    (req as Admittable)[ADMISSION] = () => {
      // Checked and counted in one step: a burst cannot pass the check before any is counted.
      const refused = this.refusal(req) ?? this.weightRefusal(1);
      if (refused !== undefined) throw refused;
      count();
    };
    (req as Admittable)[WEIGHING] = (weight) => {
      if (!counted || weighed > 0) return;
      // Refused, its error answer ends it: `count`'s end lets go of what it was counted for.
      const refused = this.weightRefusal(weight);
      if (refused !== undefined) throw refused;
      weighed = weight;
      this.held += weight;
      this.heldGauge.set(this.held);
    };
  }

  /**
   * Why an answer holding `weight` more is refused now, if it is: what the answers being sent
   * hold would pass `maxHeldWeight`. One is always let through when none holds anything.
   */
  private weightRefusal(weight: number): AppError | undefined {
    const max = this.bounds.maxHeldWeight;
    if (max === undefined || this.held === 0 || this.held + weight <= max) return undefined;
    return new AppError(
      503,
      'busy',
      'Answers still being sent to slow clients hold too much; retry later',
      {},
      { 'Retry-After': String(retryAfterSeconds(this.bounds)) },
    );
  }

  /**
   * One more answer being sent to `client` until `res` is finished or closed, then letting go of
   * what it was weighed at (`weight()`, 0 unless weighed).
   */
  private count(client: string, res: ServerResponse, weight: () => number): void {
    this.byClient.set(client, (this.byClient.get(client) ?? 0) + 1);
    this.sending += 1;
    this.gauge.set(this.sending);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const left = (this.byClient.get(client) ?? 1) - 1;
      if (left === 0) this.byClient.delete(client);
      else this.byClient.set(client, left);
      this.sending -= 1;
      this.held -= weight();
      this.gauge.set(this.sending);
      this.heldGauge.set(this.held);
    };
    res.once('finish', end);
    res.once('close', end);
  }

  /**
   * Arms the socket's idle timer for the time the answer is sent: Node resets it whenever the
   * kernel takes more of the answer, and sets its keep-alive time-out in its place once the
   * answer is finished.
   */
  private cutWhenStalled(req: IncomingMessage, res: ServerResponse): void {
    res.setTimeout(this.bounds.stallTimeoutMs, () => {
      this.cut.inc();
      this.warn(
        `cut an answer to ${this.clientOf(req)} (${req.method} ${req.url?.split('?')[0]}): ` +
          `no byte taken for ${this.bounds.stallTimeoutMs} ms`,
      );
      res.destroy();
    });
  }
}
