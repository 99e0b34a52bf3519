import { Injectable } from '@nestjs/common';

/** What an index answered to a ping. */
export type PingOutcome =
  | { kind: 'accepted' }
  /** 400: the index could not read the ping; sending it again changes nothing. */
  | { kind: 'refused'; status: number; message: string }
  /** 429, 5xx, no answer: worth trying again later (`retryAfterMs` when the index says when). */
  | { kind: 'failed'; status?: number; message: string; retryAfterMs?: number };

/** How long a ping may take: an index answers at once (it retrieves the metadata afterwards). */
const PING_TIMEOUT_MS = 30_000;

/**
 * The FAIR Data Point index's ping (FAIRDataTeam/FAIRDataPoint-index, PingController.java and
 * service/EventService.java `acceptIncomingPing`): `POST <index>` with `{"clientUrl": <root>}`;
 * 204 accepted, 400 (an ErrorDTO `{code, message}`) when the body is no ping, 429 when the
 * sender's address pinged too often. The reference FDP sends the same body
 * (FAIRDataPoint, service/ping/PingService.java).
 */
@Injectable()
export class FdpIndexClient {
  async ping(indexUrl: string, clientUrl: string): Promise<PingOutcome> {
    let res: Response;
    try {
      res = await fetch(indexUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ clientUrl }),
        signal: AbortSignal.timeout(PING_TIMEOUT_MS),
        redirect: 'error',
      });
    } catch (error) {
      return { kind: 'failed', message: (error as Error).message };
    }
    const text = (await res.text().catch(() => '')).slice(0, 500);
    if (res.ok) return { kind: 'accepted' };
    let message = text;
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? text;
    } catch {
      // Not the index's ErrorDTO: its text as it is.
    }
    if (res.status === 400) return { kind: 'refused', status: 400, message };
    const retryAfter = Number(res.headers.get('retry-after'));
    return {
      kind: 'failed',
      status: res.status,
      message,
      retryAfterMs: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined,
    };
  }
}
