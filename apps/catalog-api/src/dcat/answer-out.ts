import type { Writable } from 'node:stream';
import { Utf8Chunks } from './utf8-chunks';

/** The client is gone (its answer's body destroyed): the read that writes it stops. */
export class AnswerGone extends Error {
  constructor() {
    super('The answer was let go before it was written whole');
  }
}

/**
 * Writes an answer's text into its body while it is still being read: encoded into UTF-8 chunks
 * (Utf8Chunks), each sent as soon as it is full, and what a batch leaves over sent once the batch
 * is written (`flush`), so a client gets each batch while the next is read. Once the body is
 * destroyed (the client hung up, or its answer was refused) the next write throws AnswerGone, so
 * the read ends its transaction instead of writing for nobody.
 */
export class AnswerOut {
  private readonly out = new Utf8Chunks();

  constructor(private readonly body: Writable) {}

  write(text: string): void {
    this.send(this.out.write(text));
  }

  /** Sends what is written so far, a part of a chunk too. */
  flush(): void {
    this.send(this.out.take());
  }

  private send(chunk: Buffer | undefined): void {
    if (this.body.destroyed) throw new AnswerGone();
    // The reader never waits on the client (decisions/dcat-sent-while-read.md): what the socket
    // has not taken waits in the body, bounded by the page and weighed by DCAT_HELD_DATASETS_MAX.
    if (chunk !== undefined) this.body.write(chunk);
  }
}
