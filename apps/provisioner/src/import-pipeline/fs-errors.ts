import { ImportProblem, ImportRejectedError } from './import-errors';

/**
 * Every error code a file-system call can fail with, as one of two kinds (issue 30, item 3):
 * - bad input: the dataset is what it is, so the next attempt would fail the same way. The
 *   import is rejected at once with the problem named, never retried.
 * - a fault of the machine (or the source changing underneath): it may go away. Retried.
 * A code not listed here is taken for a fault (retried): a retry costs time, a wrong
 * rejection needs a human.
 */
const BAD_INPUT: Record<string, string> = {
  ENAMETOOLONG: 'a path or name is longer than the file system allows',
  ELOOP: 'a symbolic link (or a loop of them) where none may be',
  ENOTDIR: 'a file where a directory must be',
  EISDIR: 'a directory where a file must be',
  EFBIG: 'a file larger than the storage allows',
  EOVERFLOW: 'a file too large to be read',
  EILSEQ: 'a name the storage cannot hold',
  EMLINK: 'a directory with more entries than the storage allows',
  ENXIO: 'a special file where a file must be',
  ENODEV: 'a special file where a file must be',
  ETXTBSY: 'a file being executed, which cannot be read consistently',
};

/** Kept so that documentation and tests name what is retried; all others are too. */
export const MACHINE_FAULTS = [
  'EIO',
  'ENOSPC',
  'EDQUOT',
  'EROFS',
  'EMFILE',
  'ENFILE',
  'ENOMEM',
  'EAGAIN',
  'EBUSY',
  'EINTR',
  'ESTALE',
  'ETIMEDOUT',
  'ECONNRESET',
  'EACCES',
  'EPERM',
  'ENOENT',
  'EEXIST',
  'ENOTEMPTY',
  'EXDEV',
] as const;

export const BAD_INPUT_CODES = Object.keys(BAD_INPUT);

/** The part of a path a depositor can read: inside the payload or the staging area. */
function shownPath(path: string | undefined): string | undefined {
  if (!path) return undefined;
  const inside =
    /^\/proc\/self\/fd\/\d+\/(.*)$/s.exec(path) ?? /\/\.staging\/[^/]+\/(.*)$/s.exec(path);
  const relative = inside ? inside[1] : path.slice(path.lastIndexOf('/') + 1);
  return relative.length > 200 ? `${relative.slice(0, 199)}…` : relative;
}

/**
 * The rejection an error of bad input stands for, or null when it is not one (a fault, retried,
 * or no system error at all).
 */
export function badInputRejection(error: unknown): ImportRejectedError | null {
  const e = error as NodeJS.ErrnoException | null;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  if (!code || !Object.hasOwn(BAD_INPUT, code)) return null;
  const problem: ImportProblem = {
    code: code.toLowerCase(),
    message: `${BAD_INPUT[code]} (${code}${e!.syscall ? ` in ${e!.syscall}` : ''})`,
  };
  const path = shownPath(e!.path);
  if (path !== undefined) problem.path = path;
  return new ImportRejectedError(
    'bad_input',
    `the dataset cannot be imported: ${problem.message}`,
    [problem],
  );
}
