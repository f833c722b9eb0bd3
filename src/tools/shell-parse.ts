/**
 * A small POSIX-shell lexer for the shell policy: splits a command line into simple commands
 * and collects the bodies of command substitutions, without expanding or running anything.
 */

/** A command line split into simple commands. */
export interface ParsedCommandLine {
  /** Each simple command as shell words with quotes removed. */
  segments: string[][];
  /** Each simple command's source text, whitespace collapsed. */
  raws: string[];
  /** Bodies of `$(…)`, backticks and `<(…)`, to check as commands of their own. */
  nested: string[];
}

/** Index of the `)` closing a `(` whose body starts at `start` (quotes respected); `text.length` if none. */
function findClosingParen(text: string, start: number): number {
  let depth = 1;
  for (let i = start; i < text.length; i++) {
    const c = text.charAt(i);
    if (c === '\\') i++;
    else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      i = end === -1 ? text.length : end;
    } else if (c === '"') {
      for (i++; i < text.length && text.charAt(i) !== '"'; i++) if (text.charAt(i) === '\\') i++;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return text.length;
}

function findClosingBacktick(text: string, start: number): number {
  for (let i = start; i < text.length; i++) {
    if (text.charAt(i) === '\\') i++;
    else if (text.charAt(i) === '`') return i;
  }
  return text.length;
}

/** Substitution bodies inside text the shell expands but does not run as commands (heredoc bodies). */
function substitutionsIn(text: string): string[] {
  const found: string[] = [];
  for (let k = 0; k < text.length; k++) {
    const c = text.charAt(k);
    if (c === '\\') k++;
    else if (c === '$' && text.charAt(k + 1) === '(') {
      const end = findClosingParen(text, k + 2);
      found.push(text.slice(k + 2, end));
      k = end;
    } else if (c === '`') {
      const end = findClosingBacktick(text, k + 1);
      found.push(text.slice(k + 1, end));
      k = end;
    }
  }
  return found;
}

interface PendingHeredoc {
  delimiter: string;
  /** `<<'EOF'`: the body is literal, no substitutions run. */
  quoted: boolean;
  /** `<<-EOF`: leading tabs are stripped from body lines and the delimiter line. */
  stripTabs: boolean;
}

/** Reads a heredoc operator's delimiter word starting at `start`; returns it and the index after it. */
function readHeredocDelimiter(cmd: string, start: number): { delimiter: string; quoted: boolean; end: number } {
  let i = start;
  while (cmd.charAt(i) === ' ' || cmd.charAt(i) === '\t') i++;
  let delimiter = '';
  let quoted = false;
  while (i < cmd.length && !/[\s;&|<>()]/.test(cmd.charAt(i))) {
    const c = cmd.charAt(i);
    if (c === "'" || c === '"') {
      quoted = true;
      const close = cmd.indexOf(c, i + 1);
      const stop = close === -1 ? cmd.length : close;
      delimiter += cmd.slice(i + 1, stop);
      i = stop + 1;
    } else if (c === '\\') {
      quoted = true;
      delimiter += cmd.charAt(i + 1);
      i += 2;
    } else {
      delimiter += c;
      i++;
    }
  }
  return { delimiter, quoted, end: i };
}

/** Splits a command line into simple commands, the way `sh` would, without expanding anything. */
export function parseCommandLine(cmd: string): ParsedCommandLine {
  const parsed: ParsedCommandLine = { segments: [], raws: [], nested: [] };
  let words: string[] = [];
  let word = '';
  let inWord = false;
  let segStart = 0;
  const heredocs: PendingHeredoc[] = [];
  const endWord = (): void => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const endSegment = (end: number, next: number): void => {
    endWord();
    if (words.length > 0) parsed.segments.push(words);
    const raw = cmd.slice(segStart, end).trim().replace(/\s+/g, ' ');
    if (raw !== '') parsed.raws.push(raw);
    words = [];
    segStart = next;
  };
  /** Handles `$(`, `<(`, `>(` and backticks at `i`; returns the index after them, or -1. */
  const substitution = (i: number): number => {
    const c = cmd.charAt(i);
    if ((c === '$' || c === '<' || c === '>') && cmd.charAt(i + 1) === '(') {
      const end = findClosingParen(cmd, i + 2);
      parsed.nested.push(cmd.slice(i + 2, end));
      word += cmd.slice(i, end + 1);
      inWord = true;
      return end + 1;
    }
    if (c === '`') {
      const end = findClosingBacktick(cmd, i + 1);
      parsed.nested.push(cmd.slice(i + 1, end));
      word += cmd.slice(i, end + 1);
      inWord = true;
      return end + 1;
    }
    return -1;
  };

  let i = 0;
  while (i < cmd.length) {
    const c = cmd.charAt(i);
    const next = cmd.charAt(i + 1);
    const afterSubst = c === '<' || c === '>' ? (next === '(' ? substitution(i) : -1) : substitution(i);
    if (afterSubst !== -1) {
      i = afterSubst;
    } else if (c === '\\') {
      if (next !== '\n') {
        word += next;
        inWord = true;
      }
      i += 2;
    } else if (c === "'") {
      const end = cmd.indexOf("'", i + 1);
      const stop = end === -1 ? cmd.length : end;
      word += cmd.slice(i + 1, stop);
      inWord = true;
      i = stop + 1;
    } else if (c === '"') {
      inWord = true;
      i++;
      while (i < cmd.length && cmd.charAt(i) !== '"') {
        const d = cmd.charAt(i);
        const after = d === '$' || d === '`' ? substitution(i) : -1;
        if (after !== -1) i = after;
        else if (d === '\\' && '"\\$`\n'.includes(cmd.charAt(i + 1))) {
          word += cmd.charAt(i + 1);
          i += 2;
        } else {
          word += d;
          i++;
        }
      }
      i++;
    } else if (c === '#' && !inWord) {
      const end = cmd.indexOf('\n', i);
      i = end === -1 ? cmd.length : end;
    } else if (c === '<' && next === '<' && cmd.charAt(i + 2) === '<') {
      // A here-string (`cat <<< word`): one operator, the word after it is an ordinary word (its
      // substitutions run). Read as `<<` it would start a heredoc and hide the lines after it.
      endWord();
      words.push('<<<');
      i += 3;
    } else if (c === '<' && next === '<') {
      endWord();
      const stripTabs = cmd.charAt(i + 2) === '-';
      const { delimiter, quoted, end } = readHeredocDelimiter(cmd, i + (stripTabs ? 3 : 2));
      heredocs.push({ delimiter, quoted, stripTabs });
      // Kept as a word so `cat <<EOF` reads (and matches an allow pattern) as written.
      words.push(`<<${stripTabs ? '-' : ''}${delimiter}`);
      i = end;
    } else if (c === '\n') {
      endSegment(i, i + 1);
      i++;
      // Heredoc bodies start on the next line: they are data, not commands (but `$(…)` in
      // an unquoted one still runs).
      for (const doc of heredocs.splice(0)) {
        const bodyStart = i;
        let bodyEnd = cmd.length;
        while (i < cmd.length) {
          const eol = cmd.indexOf('\n', i);
          const line = cmd.slice(i, eol === -1 ? cmd.length : eol);
          const lineStart = i;
          i = eol === -1 ? cmd.length : eol + 1;
          if ((doc.stripTabs ? line.replace(/^\t+/, '') : line) === doc.delimiter) {
            bodyEnd = lineStart;
            break;
          }
        }
        if (!doc.quoted) parsed.nested.push(...substitutionsIn(cmd.slice(bodyStart, bodyEnd)));
        segStart = i;
      }
    } else if (/\s/.test(c)) {
      endWord();
      i++;
    } else if (c === '&' && (word.endsWith('>') || word.endsWith('<') || next === '>')) {
      // Redirections (`2>&1`, `>&2`, `&>file`), not a background operator.
      word += c;
      inWord = true;
      i++;
    } else if (c === ';' || c === '&' || c === '|') {
      const width = next === c || (c === '|' && next === '&') ? 2 : 1;
      endSegment(i, i + width);
      i += width;
    } else if (c === '(' || c === ')') {
      // Subshells and function definitions: the commands inside are segments of their own.
      endSegment(i, i + 1);
      i++;
    } else {
      word += c;
      inWord = true;
      i++;
    }
  }
  endSegment(cmd.length, cmd.length);
  return parsed;
}
