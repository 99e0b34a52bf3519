/**
 * The Crypt4GH reference implementation (EGA-archive/crypt4gh at tag v1.7, pure Python on Debian's
 * python3-nacl, python3-bcrypt, python3-docopt), run by the tests as the independent check of the
 * project's own Crypt4GH code. How it is found: docs/decisions/crypt4gh-reference-in-tests.md.
 *
 * - The source comes from a git repository holding the tag (CRYPT4GH_REFERENCE, default: the
 *   mirror that the `fetch` tool keeps on the project's machines), extracted once per commit
 *   into the system's temp directory. The tag must be the pinned commit.
 * - Python is /usr/bin/python3 (CRYPT4GH_PYTHON), Debian's interpreter with those packages
 *   (.ci/run installs them).
 * Anything missing fails the test that asked, saying what to install or set: never a skip.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const TAG = 'v1.7';
const COMMIT = 'effb89caa7a065b19df4a67f64b550dc789e7a05';
const DEFAULT_REPOSITORY = '/work/.mirror/EGA-archive+crypt4gh/repo';
const PACKAGES = 'python3-nacl python3-bcrypt python3-docopt python3-cryptography';

export interface CliRun {
  /** The file the CLI reads as stdin. */
  stdin: string;
  /** The file its stdout goes to. */
  stdout: string;
  /** C4GH_PASSPHRASE: how the reference CLI takes a secret key's passphrase without a terminal. */
  passphrase?: string;
}

export interface ReferenceCrypt4gh {
  /** The source tree: crypt4gh/ and tests/ of the tag. */
  root: string;
  /** tests/_common: alice's and bob's keys (passphrases "alice" and "bob") and test files. */
  common: string;
  python: string;
  /** `python3 -m crypt4gh <args>` (encrypt, decrypt, reencrypt, rearrange). */
  cli(args: string[], run: CliRun): Promise<void>;
  /** A script run with the reference package importable, `args` as its argv. */
  script(args: string[], run: CliRun): Promise<void>;
}

function fail(problem: string): never {
  throw new Error(`The Crypt4GH reference implementation cannot run: ${problem}`);
}

function sourceTree(): string {
  const repository = process.env.CRYPT4GH_REFERENCE ?? DEFAULT_REPOSITORY;
  const root = join(tmpdir(), `crypt4gh-reference-${COMMIT.slice(0, 12)}`);
  if (existsSync(join(root, 'crypt4gh', 'cli.py'))) return root;
  if (!existsSync(repository)) {
    fail(
      `no repository at ${repository}. Clone https://github.com/EGA-archive/crypt4gh (it must hold ` +
        `tag ${TAG}) and set CRYPT4GH_REFERENCE to it.`,
    );
  }
  let tagged: string;
  try {
    tagged = execFileSync('git', ['-C', repository, 'rev-parse', `${TAG}^{commit}`], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  } catch {
    fail(`${repository} is not a git repository holding tag ${TAG} (git rev-parse failed).`);
  }
  if (tagged !== COMMIT)
    fail(`tag ${TAG} in ${repository} is ${tagged}, not the pinned ${COMMIT}.`);
  // Extracted beside the final place and renamed into it: jest workers may race to do it.
  const partial = mkdtempSync(`${root}.partial-`);
  execFileSync('sh', [
    '-c',
    'git -C "$1" archive "$2" | tar -x -C "$3"',
    'sh',
    repository,
    COMMIT,
    partial,
  ]);
  try {
    renameSync(partial, root);
  } catch {
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(join(root, 'crypt4gh', 'cli.py'))) fail(`could not extract it into ${root}.`);
  }
  return root;
}

function checkPython(python: string): void {
  try {
    execFileSync(python, ['-c', 'import nacl, bcrypt, docopt, cryptography'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  } catch (error) {
    const detail =
      (error as { stderr?: Buffer }).stderr?.toString().trim().split('\n').pop() ?? String(error);
    fail(
      `${python} cannot import its dependencies (${detail}). Install Debian's ${PACKAGES} (apt-get install -y ${PACKAGES}).`,
    );
  }
}

function run(python: string, root: string, argv: string[], io: CliRun): Promise<void> {
  const stdin = openSync(io.stdin, 'r');
  const stdout = openSync(io.stdout, 'w');
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONPATH: root, PYTHONDONTWRITEBYTECODE: '1' };
  delete env.C4GH_SECRET_KEY;
  delete env.C4GH_PASSPHRASE;
  if (io.passphrase !== undefined) env.C4GH_PASSPHRASE = io.passphrase;
  const child = spawn(python, argv, { cwd: root, env, stdio: [stdin, stdout, 'pipe'] });
  closeSync(stdin);
  closeSync(stdout);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`reference ${argv.join(' ')} exited ${code}: ${stderr.trim()}`)),
    );
  });
}

let found: ReferenceCrypt4gh | undefined;

/** The reference implementation, located (and checked) on first use. */
export function referenceCrypt4gh(): ReferenceCrypt4gh {
  if (found) return found;
  const python = process.env.CRYPT4GH_PYTHON ?? '/usr/bin/python3';
  if (!existsSync(python)) fail(`no Python at ${python} (set CRYPT4GH_PYTHON).`);
  checkPython(python);
  const root = sourceTree();
  found = {
    root,
    common: join(root, 'tests', '_common'),
    python,
    cli: (args, io) => run(python, root, ['-m', 'crypt4gh', ...args], io),
    script: (args, io) => run(python, root, args, io),
  };
  return found;
}

/**
 * The reference CLI's plain-text of a Crypt4GH stream given in `parts` (a header and a body kept
 * apart, or a whole stream), decrypted with the secret key file at `secretKeyPath`; written to
 * and read from files in `dir`.
 */
export async function referenceDecrypt(
  parts: readonly Buffer[],
  secretKeyPath: string,
  dir: string,
  passphrase?: string,
): Promise<Buffer> {
  const input = join(dir, `reference-input-${process.pid}-${Date.now()}-${Math.random()}.c4gh`);
  writeFileSync(input, Buffer.concat(parts));
  await referenceCrypt4gh().cli(['decrypt', '--sk', secretKeyPath], {
    stdin: input,
    stdout: `${input}.plain`,
    passphrase,
  });
  return readFileSync(`${input}.plain`);
}
