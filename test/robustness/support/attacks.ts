import { Random } from './random';
import type { Route } from './routes';

/** One generated request. `body` undefined = none sent. */
export interface Attack {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** What was hostile about it, for the failure report. */
  note: string;
}

export interface AttackOptions {
  seed: number;
  count: number;
  /** Keys of every kind the app knows (valid, inactive, wrong), by a name for the report. */
  keys: Record<string, string>;
  /** Query parameters the app reads; attacked with hostile values. */
  knownParams: string[];
  /** The app's body limit: oversized bodies are just over it. */
  maxBodyBytes: number;
  /** Real values for some path parameters (by name), used half the time so handlers are reached. */
  validSegments?: Record<string, string[]>;
}

export const HOSTILE_STRINGS: readonly string[] = [
  '', ' ', '0', '-1', '1.5', '1e309', '99999999999999999999', '2147483648', 'NaN', 'null',
  'undefined', 'true', '[]', '{}', "' OR '1'='1", "1; DROP TABLE datasets;--", '" OR 1=1 --',
  '1 UNION SELECT api_key_hash FROM users', "'); SELECT pg_sleep(5);--", '../../../../etc/passwd',
  '..', '.', '..\\..\\windows\\win.ini', '/etc/passwd', '\u0000', 'a\u0000b', '<script>alert(1)</script>',
  '${jndi:ldap://127.0.0.1/x}', '{{7*7}}', '%s%s%s%n', 'é', '🙂', '\u202e', '\ud800', 'A'.repeat(5000),
  '\\', '%', '_', '*', '?', '#', '/', '%25', '%00', '%ff', 'x'.repeat(129), 'dataset-1',
];

/** Percent-encodes; a lone surrogate (not encodable) becomes the bytes a careless client sends. */
function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80';
  }
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND', 'TRACE'];

/** A path segment: usually percent-encoded hostile text, sometimes raw tricks. */
function segment(random: Random): string {
  if (random.chance(0.2)) {
    return random.pick(['%ff', '%', '%2e%2e', '..%2f..%2fetc%2fpasswd', '%00', '%c0%ae%c0%ae', 'a%2Fb', '.', '..']);
  }
  return encode(random.pick(HOSTILE_STRINGS));
}

/** Replaces `:param` segments with hostile values; sometimes adds, drops or doubles segments. */
function attackPath(random: Random, pattern: string, valid: Record<string, string[]>): string {
  let path = pattern.replace(/:([A-Za-z_]+)/g, (_, name: string) =>
    valid[name] && random.chance(0.5) ? encode(random.pick(valid[name])) : segment(random),
  );
  const twist = random.int(10);
  if (twist === 0) path += '/' + segment(random);
  else if (twist === 1) path += '/';
  else if (twist === 2) path = path.replace('/', '//');
  else if (twist === 3) path = path.toUpperCase();
  return path;
}

function query(random: Random, knownParams: string[], keys: Record<string, string>): string {
  const parts: string[] = [];
  const n = random.int(4);
  for (let i = 0; i < n; i++) {
    const name = random.chance(0.8) ? random.pick(knownParams) : random.pick(['a[b]', '__proto__', 'constructor', 'x']);
    const value = random.chance(0.15) ? random.pick(['1', '25', 'true', 'external_id']) : random.pick(HOSTILE_STRINGS);
    parts.push(`${encode(name)}=${encode(value)}`);
    // The same parameter twice: Express hands the handler an array instead of a string.
    if (random.chance(0.15)) parts.push(`${encode(name)}=${encode(random.pick(HOSTILE_STRINGS))}`);
  }
  if (random.chance(0.1)) parts.push(`API_KEY=${encode(random.pick(Object.values(keys)))}`);
  return parts.length > 0 ? `?${parts.join('&')}` : '';
}

/** Header values must stay within what HTTP allows on the wire; anything else is encoded. */
function headerSafe(value: string): string {
  return /^[\t\x20-\x7e\x80-\xff]*$/.test(value) ? value : encode(value);
}

function deepNesting(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

interface BodyChoice {
  contentType?: string;
  body: Buffer;
  note: string;
  encoding?: string;
}

function body(random: Random, maxBodyBytes: number): BodyChoice {
  const hostile = () => random.pick(HOSTILE_STRINGS);
  const json = (value: unknown, note: string): BodyChoice => ({
    contentType: 'application/json',
    body: Buffer.from(JSON.stringify(value)),
    note,
  });
  switch (random.int(16)) {
    case 0:
      return { contentType: 'application/json', body: Buffer.from(random.pick(['{', '{"a":', '[1,2', 'nul', '{"a":1,}', "{'a':1}", '\u0000', '{"a":"\\x"}'])), note: 'malformed JSON' };
    case 1:
      return { contentType: 'application/json', body: Buffer.alloc(maxBodyBytes + 1024, 0x20), note: 'oversized body' };
    case 2: {
      // Deep under a field a DTO declares, where the validation pipe would walk it.
      const field = random.pick(['items', 'name', 'username', 'groups', 'dataset_id', 'submission', 'user', 'x']);
      const deep = random.pick([
        deepNesting(random.int(100_000) + 65),
        `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`,
        `${'[{"a":'.repeat(5_000)}1${'}]'.repeat(5_000)}`,
      ]);
      return { contentType: 'application/json', body: Buffer.from(random.chance(0.3) ? deep : `{"${field}":${deep}}`), note: 'deeply nested JSON' };
    }
    case 3:
      return { contentType: 'application/json', body: Buffer.from('{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}'), note: 'prototype pollution' };
    case 4:
      return json(random.pick([null, 0, 'text', true, [], [null], 1e308]), 'wrong top-level type');
    case 5:
      return json({ items: hostile() }, 'items not a list');
    case 6:
      return json({ items: [{ name: hostile(), unknown_field: hostile(), external_id: hostile() }, null, 7] }, 'bad items');
    case 7:
      return json({ dataset_id: random.pick(['../x', '', 'x'.repeat(300), '.', '..', 'a/b', hostile()]), extra: 1 }, 'bad dataset_id');
    case 8:
      return json({ submission: random.pick(['../x', '', '.', 'a b', { ref: 'x' }, 42, hostile()]) }, 'bad submission');
    case 9:
      return json({ username: hostile(), first_name: 7, email: hostile(), groups: hostile(), is_active: 'yes' }, 'bad user');
    case 10:
      return json([{ application: hostile(), resource: hostile(), user: null, mail: 5, end: hostile() }], 'bad access request');
    case 11:
      return { contentType: random.pick(['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x']), body: Buffer.from('a=1&b=<x/>'), note: 'not JSON' };
    case 12:
      return { contentType: 'application/json; charset=utf-7', body: Buffer.from('{}'), note: 'unsupported charset' };
    case 13:
      return { contentType: 'application/json', body: Buffer.from('not really gzip'), encoding: random.pick(['gzip', 'deflate', 'br', 'x-unknown']), note: 'bad content encoding' };
    case 14:
      return { contentType: 'application/json', body: Buffer.from(JSON.stringify({ a: 'é'.repeat(10) })).subarray(0, 15), note: 'truncated UTF-8' };
    default:
      return { contentType: 'application/json', body: Buffer.from(''), note: 'empty JSON body' };
  }
}

/** Deterministic list of hostile requests spread over every route. */
export function generateAttacks(routes: Route[], options: AttackOptions): Attack[] {
  const random = new Random(options.seed);
  const keyNames = Object.keys(options.keys);
  const attacks: Attack[] = [];
  for (let i = 0; i < options.count; i++) {
    const route = routes[i % routes.length];
    const method = random.chance(0.6) ? route.method : random.pick(METHODS);
    const headers: Record<string, string> = {};
    const notes: string[] = [];
    if (random.chance(0.85)) {
      const keyName = random.pick(keyNames);
      headers['X-API-Key'] = headerSafe(options.keys[keyName]);
      notes.push(`key ${keyName}`);
    }
    if (random.chance(0.1)) headers['Authorization'] = `Bearer ${headerSafe(random.pick(HOSTILE_STRINGS))}`;
    if (random.chance(0.1)) headers['If-None-Match'] = headerSafe(random.pick(HOSTILE_STRINGS));
    if (random.chance(0.1)) headers['X-Request-Id'] = headerSafe(random.pick(HOSTILE_STRINGS));
    if (random.chance(0.1)) headers['X-Forwarded-For'] = headerSafe(random.pick(['127.0.0.1', '::1, 10.0.0.1', 'garbage', ...HOSTILE_STRINGS]));
    if (random.chance(0.05)) headers['Accept'] = random.pick(['text/html', 'application/xml', '*/*;q=abc']);
    let payload: Buffer | undefined;
    if (method !== 'GET' && method !== 'HEAD' ? random.chance(0.9) : random.chance(0.05)) {
      const choice = body(random, options.maxBodyBytes);
      payload = choice.body;
      if (choice.contentType) headers['Content-Type'] = choice.contentType;
      if (choice.encoding) headers['Content-Encoding'] = choice.encoding;
      notes.push(choice.note);
    }
    const path = attackPath(random, route.path, options.validSegments ?? {}) + query(random, options.knownParams, options.keys);
    attacks.push({ method, path, headers, body: payload, note: notes.join(', ') });
  }
  return attacks;
}
