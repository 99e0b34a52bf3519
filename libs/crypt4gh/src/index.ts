export * from './format';
export {
  generateKeyPair,
  parsePublicKey,
  parseSecretKey,
  publicKeyFile,
  secretKeyFile,
} from './key-files';
export type { KeyDerivation, KeyPair, SecretKeyFileOptions } from './key-files';
export { publicKeyOf } from './x25519';
export { newDataKey } from './random';
export {
  buildHeader,
  HeaderWriter,
  headerPackets,
  openHeader,
  rewrapHeader,
  secretKey,
} from './header';
export type { HeaderContent, HeaderKeys, OpenedHeader, SecretKey } from './header';
export { ByteReader } from './byte-reader';
export type { ByteSource } from './byte-reader';
export {
  applyEditList,
  decryptBody,
  encryptBody,
  SegmentDecryptor,
  SegmentEncryptor,
} from './body';
export {
  decrypt,
  encrypt,
  encryptStream,
  headerAt,
  openStream,
  plaintextRange,
  rewrap,
} from './streams';
export type { Encryption, OpenedStream, PlaintextRange } from './streams';
