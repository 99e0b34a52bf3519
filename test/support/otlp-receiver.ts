import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** One span as an OTLP/HTTP JSON export carries it, with the name of the service that sent it. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface KeyValue {
  key: string;
  value: AnyValue;
}
/** The request body of `POST /v1/traces` (opentelemetry-proto, trace_service.proto, JSON form). */
interface ExportTraceServiceRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: KeyValue[];
      }[];
    }[];
  }[];
}

const valueOf = (v: AnyValue) =>
  v.stringValue ??
  (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue ?? ''));
const attributesOf = (list: KeyValue[] = []) =>
  Object.fromEntries(list.map((kv) => [kv.key, valueOf(kv.value)]));

export interface OtlpReceiver {
  /** What OTEL_EXPORTER_OTLP_ENDPOINT is set to (the exporters add `/v1/traces`). */
  endpoint: string;
  spans(): ReceivedSpan[];
  /** Paths anything was posted to, e.g. to see that no metrics or logs were sent. */
  paths(): string[];
  close(): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
}

/**
 * A loopback OTLP/HTTP receiver of the JSON encoding (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`),
 * like a collector's `otlphttp` receiver: it keeps every span posted to `/v1/traces` and answers
 * 200 with an empty ExportTraceServiceResponse; a body that is not JSON gets 400.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      paths.push(req.url ?? '');
      const body = await bodyOf(req);
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      let request: ExportTraceServiceRequest;
      try {
        request = JSON.parse(body.toString('utf8')) as ExportTraceServiceRequest;
      } catch {
        res.writeHead(400).end();
        return;
      }
      for (const resourceSpans of request.resourceSpans ?? []) {
        const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
        for (const scope of resourceSpans.scopeSpans ?? [])
          for (const span of scope.spans ?? [])
            spans.push({
              service,
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name,
              kind: span.kind ?? 0,
              attributes: attributesOf(span.attributes),
            });
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    })();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () => [...spans],
    paths: () => [...paths],
    close: () => new Promise((done) => server.close(() => done())),
  };
}
