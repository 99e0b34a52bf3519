import { PassThrough } from 'node:stream';
import { AnswerGone, AnswerOut } from './answer-out';

describe('AnswerOut', () => {
  const received = (body: PassThrough) => {
    const chunks: Buffer[] = [];
    body.on('data', (chunk: Buffer) => chunks.push(chunk));
    return () => Buffer.concat(chunks).toString('utf8');
  };

  it('sends what a batch wrote once it is flushed, before the answer ends', async () => {
    const body = new PassThrough();
    const text = received(body);
    const out = new AnswerOut(body);
    out.write('@prefix dcat: <http://www.w3.org/ns/dcat#> .\n');
    out.write('<a> a dcat:Dataset .\n');
    await new Promise(setImmediate);
    expect(text()).toBe('');
    out.flush();
    await new Promise(setImmediate);
    expect(text()).toBe('@prefix dcat: <http://www.w3.org/ns/dcat#> .\n<a> a dcat:Dataset .\n');
    expect(body.writableEnded).toBe(false);
  });

  it('stops the read once the body is destroyed (the client is gone)', () => {
    const body = new PassThrough();
    const out = new AnswerOut(body);
    out.write('<a> a <b> .\n');
    body.destroy();
    expect(() => out.flush()).toThrow(AnswerGone);
    expect(() => out.write('x'.repeat(200_000))).toThrow(AnswerGone);
  });
});
