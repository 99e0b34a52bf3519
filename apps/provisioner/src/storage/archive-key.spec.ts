import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair, parsePublicKey, secretKeyFile } from '@app/crypt4gh';
import { tempDir } from '../../test/support/dropzone-fixture';
import { loadArchiveKey } from './archive-key';

describe('loadArchiveKey', () => {
  const dir = tempDir('archive-key');
  const pair = generateKeyPair();
  const keyFile = join(dir, 'archive.sec');
  const passphraseFile = join(dir, 'passphrase');

  beforeAll(async () => {
    writeFileSync(keyFile, await secretKeyFile(pair.secretKey, { passphrase: 'right' }));
    writeFileSync(passphraseFile, 'right\nignored second line\n');
  });

  it('opens an encrypted key file with the first line of the passphrase file', async () => {
    const key = await loadArchiveKey(keyFile, passphraseFile);
    expect(key.secretKey).toEqual(pair.secretKey);
    expect(key.publicKey).toEqual(pair.publicKey);
    expect(parsePublicKey(key.publicKeyFile)).toEqual(pair.publicKey);
  });

  it('refuses, naming the setting: a missing file, a wrong passphrase, no passphrase', async () => {
    await expect(loadArchiveKey(join(dir, 'absent.sec'))).rejects.toThrow(
      /^C4GH_ARCHIVE_SECRET_KEY_FILE .*absent\.sec cannot be read \(ENOENT\)/,
    );
    await expect(loadArchiveKey(keyFile, join(dir, 'absent'))).rejects.toThrow(
      /^C4GH_ARCHIVE_PASSPHRASE_FILE .* cannot be read \(ENOENT\)/,
    );
    const wrong = join(dir, 'wrong');
    writeFileSync(wrong, 'wrong\n');
    await expect(loadArchiveKey(keyFile, wrong)).rejects.toThrow(/^C4GH_ARCHIVE_SECRET_KEY_FILE /);
    await expect(loadArchiveKey(keyFile)).rejects.toThrow(/^C4GH_ARCHIVE_SECRET_KEY_FILE /);
  });
});
