import { SignatureV4 } from '@smithy/signature-v4';
import { createHash, createHmac } from 'node:crypto';
import { NodeSha256 } from './node-sha256';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('NodeSha256', () => {
  it('hashes and MACs as node:crypto does, with string and byte keys, the same key reused and reset', async () => {
    expect(hex(await digestOf(new NodeSha256(), 'abc'))).toBe(
      createHash('sha256').update('abc').digest('hex'),
    );
    const key = new Uint8Array(Buffer.from('a key of thirty-two bytes, more or less'));
    const expected = createHmac('sha256', Buffer.from(key)).update('payload').digest('hex');
    // The same key object twice: the second MAC uses the KeyObject made for the first.
    expect(hex(await digestOf(new NodeSha256(key), 'payload'))).toBe(expected);
    expect(hex(await digestOf(new NodeSha256(key), 'payload'))).toBe(expected);
    expect(hex(await digestOf(new NodeSha256('AWS4secret'), 'x'))).toBe(
      createHmac('sha256', 'AWS4secret').update('x').digest('hex'),
    );
    const reused = new NodeSha256(key);
    reused.update('something else');
    reused.reset();
    reused.update('payload');
    expect(hex(await reused.digest())).toBe(expected);
  });

  // AWS's Signature V4 test suite, "get-vanilla" (docs.aws.amazon.com, sigv4 test suite):
  // the published signature for these credentials, date, region and service.
  it("signs AWS's get-vanilla request to its published signature, as the SDK's signer with it", async () => {
    const signer = new SignatureV4({
      credentials: {
        accessKeyId: 'AKIDEXAMPLE',
        secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      },
      region: 'us-east-1',
      service: 'service',
      sha256: NodeSha256,
      applyChecksum: false,
    });
    for (let i = 0; i < 2; i++) {
      // Twice: the second signature uses the signer's cached day key, as a KeyObject already.
      const signed = await signer.sign(
        {
          method: 'GET',
          protocol: 'https:',
          hostname: 'example.amazonaws.com',
          path: '/',
          query: {},
          headers: { host: 'example.amazonaws.com' },
        },
        { signingDate: new Date('2015-08-30T12:36:00Z') },
      );
      expect(signed.headers.authorization).toBe(
        'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, ' +
          'SignedHeaders=host;x-amz-date, ' +
          'Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
      );
    }
  });
});

function digestOf(hash: NodeSha256, data: string): Promise<Uint8Array> {
  hash.update(data);
  return hash.digest();
}
