import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';

/**
 * result.json as the GDI validator contract shapes it (validation-framework,
 * validator-specification.md, "Output specification"), read as untrusted input: bounded in
 * size, checked field by field, each message cut to a bounded length.
 */
export interface ValidatorMessage {
  level: 'info' | 'warning' | 'error';
  message: string;
}

export interface ValidatorFileResult {
  path: string;
  result: 'passed' | 'failed';
  messages: ValidatorMessage[];
}

export interface ValidatorResult {
  result: 'passed' | 'failed';
  files: ValidatorFileResult[];
  messages: ValidatorMessage[];
}

/** Largest result.json read; a larger one is refused (and no file the validator writes may grow past it). */
export const RESULT_MAX_BYTES = 8 * 1024 * 1024;
/** A message or path longer than this is cut (what an import record keeps of it). */
export const MESSAGE_MAX_CHARS = 1000;

const LEVELS = ['info', 'warning', 'error'];
const RESULTS = ['passed', 'failed'];

/** The result, or why it cannot be used (no file, too large, not JSON, not the contract's shape). */
export type ResultReading = { ok: ValidatorResult } | { problem: string };

function cut(text: string): string {
  return text.length > MESSAGE_MAX_CHARS ? `${text.slice(0, MESSAGE_MAX_CHARS)}…` : text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function messagesOf(raw: unknown, where: string): ValidatorMessage[] | string {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) return `${where} is not a list`;
  const messages: ValidatorMessage[] = [];
  for (const [i, entry] of raw.entries()) {
    if (!isObject(entry) || !LEVELS.includes(entry.level as string))
      return `${where}[${i}].level is not one of ${LEVELS.join(', ')}`;
    if (typeof entry.message !== 'string') return `${where}[${i}].message is not a string`;
    messages.push({ level: entry.level as ValidatorMessage['level'], message: cut(entry.message) });
  }
  return messages;
}

/** Checks a parsed result.json against the contract's shape. */
export function resultOf(raw: unknown): ResultReading {
  if (!isObject(raw)) return { problem: 'result.json is not a JSON object' };
  if (!RESULTS.includes(raw.result as string))
    return { problem: 'result.json: "result" is not "passed" or "failed"' };
  const messages = messagesOf(raw.messages, 'result.json: messages');
  if (typeof messages === 'string') return { problem: messages };
  if (raw.files !== undefined && !Array.isArray(raw.files))
    return { problem: 'result.json: files is not a list' };
  const files: ValidatorFileResult[] = [];
  for (const [i, entry] of ((raw.files as unknown[] | undefined) ?? []).entries()) {
    const where = `result.json: files[${i}]`;
    if (!isObject(entry) || typeof entry.path !== 'string')
      return { problem: `${where}.path is not a string` };
    if (!RESULTS.includes(entry.result as string))
      return { problem: `${where}.result is not "passed" or "failed"` };
    const fileMessages = messagesOf(entry.messages, `${where}.messages`);
    if (typeof fileMessages === 'string') return { problem: fileMessages };
    files.push({
      path: cut(entry.path),
      result: entry.result as 'passed' | 'failed',
      messages: fileMessages,
    });
  }
  return { ok: { result: raw.result as 'passed' | 'failed', files, messages } };
}

/**
 * Reads `<output>/result.json`: a regular file (not a link) of at most RESULT_MAX_BYTES, never
 * more read than that.
 */
export async function readResult(path: string): Promise<ResultReading> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { problem: code === 'ELOOP' ? 'result.json is a link' : 'it wrote no result.json' };
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { problem: 'result.json is not a regular file' };
    if (stats.size > RESULT_MAX_BYTES)
      return { problem: `result.json is larger than ${RESULT_MAX_BYTES} bytes` };
    // One byte more than its size: a file still growing (a process left behind) is refused.
    const buffer = Buffer.alloc(stats.size + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > stats.size) return { problem: 'result.json was still being written' };
    let parsed: unknown;
    try {
      parsed = JSON.parse(buffer.subarray(0, length).toString('utf8'));
    } catch {
      return { problem: 'result.json is not JSON' };
    }
    return resultOf(parsed);
  } finally {
    await handle.close();
  }
}
