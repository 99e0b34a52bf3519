#!/usr/bin/env node
// `npm run drs -- get <drs:// URI> [--out FILE]`: reads one GA4GH DRS object as a researcher does.
// It gets a passport, resolves the object (POST /objects/{id} with the passport, DRS 1.5), asks
// for an access URL (POST /objects/{id}/access/{access_id}), follows it and checks the bytes'
// SHA-256 against the object's checksum before the file takes its name. Beside a running
// `npm start` it needs no flags: it acts as the demo researcher, whose visas it reads from the
// catalog with npm start's local broker key, as a passport broker would.
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { createWriteStream, existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Where relative file names are read against: where the user typed the command. `npm run drs`
 * runs in the repository's root and gives that directory as INIT_CWD (only for this script: one
 * inherited from another npm script is not the user's). libs/platform's userDirectory, for the
 * TypeScript commands.
 */
function userDirectory(env = process.env) {
  return env.npm_lifecycle_event === 'drs' && env.INIT_CWD ? env.INIT_CWD : process.cwd();
}

export const USAGE = `Usage: npm run drs -- get <drs://host/id> [--out FILE] [--passport FILE | --token TOKEN]

Reads one GA4GH DRS object: resolves it, follows its access URL and verifies its SHA-256 before
the file is kept (as --out, else as the object's name in the current directory; never over an
existing file). A dataset's object is its manifest: the DRS id of each of its files. An object
stored encrypted (archive mode) is asked for with a Crypt4GH key made for this read alone and
decrypted as it arrives (this needs npm run build).

Credentials, the first that applies:
  --passport FILE   a GA4GH passport (JWT) or visa, from a broker; "-" reads standard input
  --token TOKEN     a login token (Authorization: Bearer), DRS_TOKEN in the environment too
  neither           beside a running npm start of this checkout: the demo researcher's passport,
                    made from the catalog's visas with npm start's local broker key

drs://host/id is read at https://host/ga4gh/drs/v1 (http for localhost and 127.0.0.1), as
DRS 1.5 resolves hostname-based URIs. Exit codes: 0 saved, 1 refused or failed, 2 bad usage.`;

class UsageError extends Error {}

/** The command line: `get`, the URI and the options. */
export function parseArgs(argv) {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h') return { help: true };
  if (command !== 'get') throw new UsageError(`unknown command "${command}"`);
  const options = { uri: undefined, out: undefined, passport: undefined, token: undefined };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const flag = { '--out': 'out', '--passport': 'passport', '--token': 'token' }[arg];
    if (flag !== undefined) {
      if (rest[i + 1] === undefined) throw new UsageError(`${arg} needs a value`);
      options[flag] = rest[++i];
    } else if (arg === '--help' || arg === '-h') return { help: true };
    else if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}`);
    else if (options.uri === undefined) options.uri = arg;
    else throw new UsageError(`one URI at a time (also got ${arg})`);
  }
  if (options.uri === undefined) throw new UsageError('a drs:// URI is required');
  return { ...options, ...parseDrsUri(options.uri) };
}

/** drs://host[:port]/id to the service's base URL and the object id. */
export function parseDrsUri(uri) {
  const match = /^drs:\/\/([^/?#]+)\/([^/?#]+)$/.exec(uri);
  if (match === null) throw new UsageError(`not a hostname-based DRS URI: ${uri}`);
  const [, host, id] = match;
  const local = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/.test(host);
  return { base: `${local ? 'http' : 'https'}://${host}/ga4gh/drs/v1`, id: decodeURIComponent(id) };
}

/** A passport as a broker hands it over: the visas in a JWT signed by a key of the moment. */
export function passportOf(visas, subject) {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const now = Math.floor(Date.now() / 1000);
  const part = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${part({ alg: 'ES256', typ: 'JWT' })}.${part({ sub: subject, iat: now, exp: now + 3600, ga4gh_passport_v1: visas })}`;
  const signature = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

/** The demo researcher's passport, from the catalog of the `npm start` running in this checkout. */
async function demoPassport() {
  const stateFile = join(resolve(root, process.env.START_DATA_DIR ?? '.data'), 'npm-start.json');
  if (!existsSync(stateFile)) {
    throw new Error('no credentials: give --passport or --token (or run this beside `npm start`, which acts as its demo researcher)');
  }
  const state = JSON.parse(readFileSync(stateFile, 'utf8'));
  if (!state.demo_researcher) throw new Error('npm start runs without demo data: give --passport or --token');
  const { GA4GH_BROKER_API_KEY: key } = JSON.parse(readFileSync(state.broker_key_file, 'utf8'));
  const url = `${state.catalog_url}/api/ga4gh/permissions/${encodeURIComponent(state.demo_researcher)}`;
  const res = await fetch(url, { headers: { 'X-API-Key': key } });
  if (!res.ok) throw new Error(`the catalog refused the demo researcher's visas (${res.status}): ${await res.text()}`);
  const { ga4gh_passport_v1: visas } = await res.json();
  say(`acting as the demo researcher ${state.demo_researcher} (${visas.length} visa${visas.length === 1 ? '' : 's'} from ${state.catalog_url})`);
  return passportOf(visas, state.demo_researcher);
}

async function credentialsOf(options) {
  if (options.passport !== undefined) {
    const text = options.passport === '-' ? readFileSync(0, 'utf8') : readFileSync(resolve(userDirectory(), options.passport), 'utf8');
    return { passport: text.trim() };
  }
  const token = options.token ?? process.env.DRS_TOKEN;
  if (token) return { token };
  return { passport: await demoPassport() };
}

/** A DRS call with the credentials: passports in a POST body, or a bearer token. */
async function call(url, credentials, method = 'POST') {
  const headers = { Accept: 'application/json' };
  let body;
  if (credentials.token !== undefined) headers.Authorization = `Bearer ${credentials.token}`;
  if (method === 'POST') {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(credentials.passport === undefined ? {} : { passports: [credentials.passport] });
  }
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  if (!res.ok) {
    let detail = text;
    try {
      detail = JSON.parse(text).msg ?? text;
    } catch {
      // not JSON
    }
    throw new Error(`${method} ${url} answered ${res.status}: ${detail}`);
  }
  return JSON.parse(text);
}

const say = (text) => process.stderr.write(`${text}\n`);

/** The project's Crypt4GH library as built (npm run build; npm start builds it). */
async function crypt4gh() {
  const built = join(root, 'dist/apps/provisioner/libs/crypt4gh/src/index.js');
  if (!existsSync(built)) throw new Error(`the object is stored encrypted (Crypt4GH), and reading it needs ${built}: run npm run build`);
  return (await import(built)).default;
}

/**
 * The access URL's answer. An object the archive stores encrypted is refused without a reader's
 * key (400 c4gh_key_required): then it is asked for again with a key pair made for this read
 * alone, and the Crypt4GH stream it answers is decrypted here, as it arrives.
 */
async function open(access) {
  const res = await fetch(access.url, { headers: access.headers ?? {} });
  if (res.status === 400) {
    const text = await res.text();
    if (!text.includes('c4gh_key_required')) throw new Error(`the access URL answered 400: ${text}`);
    const c4gh = await crypt4gh();
    const reader = c4gh.generateKeyPair();
    const key = Buffer.from(c4gh.publicKeyFile(reader.publicKey)).toString('base64');
    const encrypted = await fetch(access.url, { headers: { ...access.headers, 'X-C4GH-Public-Key': key } });
    if (!encrypted.ok || encrypted.body === null) throw new Error(`the access URL answered ${encrypted.status} to a Crypt4GH read`);
    return Readable.from(c4gh.decrypt(Readable.fromWeb(encrypted.body), [reader.secretKey]));
  }
  if (!res.ok || res.body === null) throw new Error(`the access URL answered ${res.status}`);
  return Readable.fromWeb(res.body);
}

/** Streams `url` into `target` (through a temporary file), checking its SHA-256 and size. */
async function download(access, target, expected) {
  const body = await open(access);
  const partial = `${target}.part-${process.pid}`;
  const hash = createHash('sha256');
  let bytes = 0;
  try {
    await pipeline(
      body,
      async function* (chunks) {
        for await (const chunk of chunks) {
          hash.update(chunk);
          bytes += chunk.length;
          yield chunk;
        }
      },
      createWriteStream(partial, { flags: 'wx' }),
    );
    const actual = hash.digest('hex');
    if (expected.size !== undefined && bytes !== expected.size) {
      throw new Error(`got ${bytes} bytes, the object has ${expected.size}: nothing kept`);
    }
    if (actual !== expected.sha256) {
      throw new Error(`SHA-256 mismatch: got ${actual}, the object's checksum is ${expected.sha256}: nothing kept`);
    }
    if (existsSync(target)) throw new Error(`${target} exists: nothing overwritten (choose another --out)`);
    renameSync(partial, target);
    return bytes;
  } finally {
    rmSync(partial, { force: true });
  }
}

export async function get(options) {
  const credentials = await credentialsOf(options);
  const objectUrl = `${options.base}/objects/${encodeURIComponent(options.id)}`;
  // DRS 1.5: passports go in a POST body; a bearer token with GET.
  const object = await call(objectUrl, credentials, credentials.passport === undefined ? 'GET' : 'POST');
  const sha256 = object.checksums?.find((c) => c.type.toLowerCase().replace('-', '') === 'sha256')?.checksum;
  if (sha256 === undefined) throw new Error(`${options.uri} has no SHA-256 checksum to verify against`);
  const method = object.access_methods?.find((m) => m.type === 'https') ?? object.access_methods?.[0];
  if (method === undefined) throw new Error(`${options.uri} offers no access method`);
  const access = method.access_url ?? (await call(`${objectUrl}/access/${encodeURIComponent(method.access_id)}`, credentials));
  const target = resolve(userDirectory(), options.out ?? basename(object.name || options.id));
  if (existsSync(target)) throw new Error(`${target} exists: nothing overwritten (choose another --out)`);
  const bytes = await download(access, target, { sha256, size: object.size });
  say(`saved ${target} (${bytes} bytes, SHA-256 ${sha256} verified)`);
  if (object.mime_type === 'application/json' && /manifest/i.test(object.description ?? '')) {
    const manifest = JSON.parse(readFileSync(target, 'utf8'));
    const host = new URL(options.base).host;
    say('the dataset\'s files (npm run drs -- get <URI>):');
    for (const o of manifest.objects ?? []) say(`  drs://${host}/${o.id}   ${o.path}`);
  }
  return { target, bytes, sha256 };
}

async function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    say(`drs: ${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  try {
    await get(options);
  } catch (error) {
    say(`drs: ${error.message}`);
    process.exit(1);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
