import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

export interface NumberedLine {
  text: string;
  line: number;
}

/**
 * Yields the lines of a text or a byte stream one at a time, so a file of any size is read in
 * bounded memory. Line endings (LF or CRLF) and a leading byte-order mark are removed.
 */
export async function* readLines(source: string | Readable): AsyncGenerator<NumberedLine> {
  let line = 0;
  for await (const raw of typeof source === 'string' ? splitText(source) : splitStream(source)) {
    line += 1;
    yield { text: line === 1 ? raw.replace(/^\uFEFF/, '') : raw, line };
  }
}

function* splitText(text: string): Generator<string> {
  let start = 0;
  while (start < text.length) {
    const end = text.indexOf('\n', start);
    const stop = end === -1 ? text.length : end;
    yield text.slice(start, stop).replace(/\r$/, '');
    start = stop + 1;
  }
}

function splitStream(stream: Readable): AsyncIterable<string> {
  stream.setEncoding('utf8');
  return createInterface({ input: stream, crlfDelay: Infinity });
}
