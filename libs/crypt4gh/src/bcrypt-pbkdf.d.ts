// The package ships no types; this declares the one function the key files use (OpenBSD's
// bcrypt_pbkdf: writes keylen derived bytes into `key`, returns 0, or -1 on bad arguments).
declare module 'bcrypt-pbkdf' {
  export function pbkdf(
    pass: Uint8Array,
    passlen: number,
    salt: Uint8Array,
    saltlen: number,
    key: Uint8Array,
    keylen: number,
    rounds: number,
  ): number;
}
