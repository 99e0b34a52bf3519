// Families of hostile input shared by the unit specs of the HTTP layer and the robustness suite:
// each family is a list of variants, so a fix is checked against the class, not one example.

/** Every spelling of the API_KEY query parameter a client could send, encoded or not. */
export const KEY_PARAMETER_NAMES = [
  'API_KEY',
  'api_key',
  'Api_Key',
  'API%5FKEY',
  'API%5fKEY',
  '%41PI_KEY',
  '%41%50%49%5F%4B%45%59',
  'API%5FKEY%00',
  'API_KEY[]',
  'API%5BKEY',
  'API+KEY',
  'API%20KEY',
  'api-key',
  'APIKEY',
];

/** Byte sequences that are not UTF-8, each a classic way of getting it wrong. */
export const INVALID_UTF8: Record<string, number[]> = {
  'a lone continuation byte': [0x80],
  'a Latin-1 é': [0xe9],
  'a truncated two-byte sequence': [0xc3],
  'a truncated three-byte sequence': [0xe2, 0x82],
  'an overlong slash': [0xc0, 0xaf],
  'an overlong three-byte NUL': [0xe0, 0x80, 0x80],
  'an encoded surrogate (CESU-8)': [0xed, 0xa0, 0x80],
  'a code point above U+10FFFF': [0xf4, 0x90, 0x80, 0x80],
  'a five-byte form': [0xf8, 0x88, 0x80, 0x80, 0x80],
  'the bytes 0xFE 0xFF': [0xfe, 0xff],
};

/** `before`, the raw bytes, `after`, as one body (a client library would re-encode a string). */
export const withBytes = (before: string, bytes: number[], after: string): Buffer =>
  Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]);

/** Days that do not exist, and forms that are not dates; JavaScript's Date takes most of them. */
export const IMPOSSIBLE_DATES = [
  '2026-02-30',
  '2026-02-29',
  '2100-02-29',
  '2026-04-31',
  '2026-06-31',
  '2026-13-01',
  '2026-00-10',
  '2026-01-00',
  '2026-01-32',
  '0000-01-01',
  '2026-1-01',
  '26-01-01',
  '2026/01/01',
  ' 2026-01-01',
];

/** Timestamps with a field out of range. */
export const IMPOSSIBLE_TIMESTAMPS = [
  '2026-02-30T00:00:00Z',
  '2026-04-31T12:00:00+02:00',
  '2026-01-01T24:00:00Z',
  '2026-01-01T23:60:00Z',
  '2026-01-01T23:59:60Z',
  '2026-01-01T12:00:00+24:00',
  '2026-01-01T12:00:00',
];

/**
 * Requests Node's HTTP parser refuses before any app code runs, with the status Node gives
 * them. `path` is a route that exists on both services; `bodyPath` one that reads a body (with
 * the caller's key), where the broken framing of a body is met only once the app reads it.
 */
export function malformedRequests(
  path: string,
  bodyPath = path,
): { name: string; raw: string; status: number }[] {
  const flood = Array.from({ length: 2000 }, (_, i) => `X-Flood-${i}: ${'v'.repeat(10)}\r\n`).join(
    '',
  );
  return [
    {
      name: 'a flood of headers',
      raw: `GET ${path} HTTP/1.1\r\nHost: x\r\n${flood}\r\n`,
      status: 431,
    },
    {
      name: 'one huge header',
      raw: `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
      status: 431,
    },
    {
      name: 'a huge cookie',
      raw: `GET ${path} HTTP/1.1\r\nHost: x\r\nCookie: c=${'c'.repeat(20_000)}\r\n\r\n`,
      status: 431,
    },
    {
      name: 'a huge URL',
      raw: `GET ${path}?${'q'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      status: 431,
    },
    { name: 'a request line that is not HTTP', raw: 'GARBAGE\r\n\r\n', status: 400 },
    { name: 'an unknown method', raw: `BREW ${path} HTTP/1.1\r\nHost: x\r\n\r\n`, status: 400 },
    {
      name: 'a space in the target',
      raw: `GET ${path} x HTTP/1.1\r\nHost: x\r\n\r\n`,
      status: 400,
    },
    {
      name: 'a NUL in the request line',
      raw: `GET ${path}\u0000 HTTP/1.1\r\nHost: x\r\n\r\n`,
      status: 400,
    },
    { name: 'an invalid version', raw: `GET ${path} HTTP/1.x\r\nHost: x\r\n\r\n`, status: 400 },
    {
      name: 'a header name with a space',
      raw: `GET ${path} HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n`,
      status: 400,
    },
    {
      name: 'a header line without a colon',
      raw: `GET ${path} HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n`,
      status: 400,
    },
    {
      name: 'a control character in a header value',
      raw: `GET ${path} HTTP/1.1\r\nHost: x\r\nX-A: a\u0001b\r\n\r\n`,
      status: 400,
    },
    {
      name: 'both Content-Length and Transfer-Encoding',
      raw: `POST ${bodyPath} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}`,
      status: 400,
    },
    {
      name: 'a malformed chunk size',
      raw: `POST ${bodyPath} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      status: 400,
    },
    {
      name: 'two Content-Length values',
      raw: `POST ${bodyPath} HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
      status: 400,
    },
  ];
}
