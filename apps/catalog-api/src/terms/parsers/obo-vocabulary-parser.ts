import type { NumberedLine } from './line-reader';
import type { ParsedTerm } from './parsed-term';
import { TermChecker } from './term-validation';
import { VocabularyFormatError } from './vocabulary-format-error';

interface TermStanza {
  line: number;
  id?: string;
  name?: string;
  obsolete: boolean;
}

const STANZA_HEADER = /^\[([A-Za-z]+)\]$/;
const TAG_VALUE = /^([^\s:][^:]*):(.*)$/;

/**
 * Reads the `[Term]` stanzas of an OBO 1.2/1.4 file: `id:` and `name:` are kept, terms marked
 * `is_obsolete: true` are skipped, every other tag (synonyms, xrefs, relations) and every other
 * stanza type (`[Typedef]`, `[Instance]`) is ignored. The header before the first stanza is ignored.
 */
export async function* parseOboVocabulary(
  lines: AsyncIterable<NumberedLine>,
): AsyncGenerator<ParsedTerm> {
  const checker = new TermChecker();
  let stanza: TermStanza | undefined;
  for await (const { text, line } of lines) {
    const trimmed = text.trim();
    if (trimmed.startsWith('[')) {
      const header = STANZA_HEADER.exec(trimmed);
      if (!header) throw new VocabularyFormatError(line, `malformed stanza header "${trimmed}"`);
      if (stanza) yield* finish(stanza, checker);
      stanza = header[1] === 'Term' ? { line, obsolete: false } : undefined;
      continue;
    }
    if (!stanza || trimmed === '' || trimmed.startsWith('!')) continue;
    const tagValue = TAG_VALUE.exec(trimmed);
    if (!tagValue)
      throw new VocabularyFormatError(
        line,
        `expected "tag: value" in a [Term] stanza, found "${trimmed}"`,
      );
    applyTag(stanza, tagValue[1].trim(), cleanValue(tagValue[2]), line);
  }
  if (stanza) yield* finish(stanza, checker);
}

function applyTag(stanza: TermStanza, tag: string, value: string, line: number): void {
  if (tag === 'id' || tag === 'name') {
    if (stanza[tag] !== undefined) {
      throw new VocabularyFormatError(
        line,
        `a second "${tag}:" in the [Term] stanza starting on line ${stanza.line}`,
      );
    }
    stanza[tag] = value;
  } else if (tag === 'is_obsolete') {
    stanza.obsolete = value === 'true';
  }
}

function* finish(stanza: TermStanza, checker: TermChecker): Generator<ParsedTerm> {
  if (stanza.id === undefined) {
    throw new VocabularyFormatError(stanza.line, 'the [Term] stanza has no "id:"');
  }
  if (stanza.obsolete) return;
  if (stanza.name === undefined) {
    throw new VocabularyFormatError(
      stanza.line,
      `the [Term] stanza of ${stanza.id} has no "name:"`,
    );
  }
  yield checker.check(stanza.id, stanza.name, stanza.line);
}

/**
 * Removes what OBO allows after a value, an unescaped `! comment` and `{trailing modifiers}`,
 * then resolves backslash escapes (`\!`, `\{`, `\"`, `\\`; `\n`, `\t` and `\W` become spaces).
 */
function cleanValue(raw: string): string {
  let value = '';
  for (let i = 0; i < raw.length; i += 1) {
    const char = raw[i];
    if (char === '\\' && i + 1 < raw.length) {
      const next = raw[i + 1];
      value += next === 'n' || next === 't' || next === 'W' ? ' ' : next;
      i += 1;
    } else if (char === '!' && (i === 0 || /\s/.test(raw[i - 1]))) {
      break;
    } else {
      value += char;
    }
  }
  return value.replace(/\s\{[^{}]*\}\s*$/, '').trim();
}
