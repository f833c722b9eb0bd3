/**
 * Errors that end a command. Each carries the SPEC §4 exit code and a stable `code`
 * that appears in the final `result` event's `status`. Messages are written for the
 * user: they name the file, key or host and say what to do next.
 */

/** SPEC §4 exit codes. */
export const EXIT = {
  success: 0,
  error: 1,
  invalid_input: 2,
  incomplete: 3,
  aborted: 4,
  budget_exhausted: 5,
  llm_unavailable: 75,
  interrupted: 130,
} as const;

export type ExitStatus = keyof typeof EXIT;

/** JSON's short escapes; every other control character is written `\u00XX`, as JSON.stringify does. */
const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\b': '\\b', '\t': '\\t', '\n': '\\n', '\f': '\\f', '\r': '\\r' };

function escapeControl(c: string): string {
  return SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * `s` with every control character (C0, DEL, C1) escaped the way JSON.stringify writes them
 * (`\n`, `\u001b`). For names, keys and paths taken from user files and put into messages: a
 * newline would break the one-line message and an ESC would drive the user's terminal.
 */
export function printable(s: string): string {
  return s.replace(/\p{Cc}/gu, escapeControl);
}

export class NaviError extends Error {
  readonly status: ExitStatus;
  /** Machine-readable detail, e.g. `config_invalid`, `model_not_found`. */
  readonly code: string;

  constructor(status: ExitStatus, code: string, message: string, options?: { cause?: unknown }) {
    // Whatever a message quotes, it cannot drive the terminal it is printed on. Line breaks
    // stay: some messages are lists on purpose (every problem of a task file).
    super(message.replace(/[^\P{Cc}\n]/gu, escapeControl), options);
    this.name = new.target.name;
    this.status = status;
    this.code = code;
  }

  get exitCode(): number {
    return EXIT[this.status];
  }
}

/** Bad flags or an invalid user file (config, task, profile, tool module): exit 2. */
export class InvalidInputError extends NaviError {
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super('invalid_input', code, message, options);
  }
}

/** Ollama unreachable or stream stalled: exit 75 (retry later). A model that is not pulled is invalid input (2). */
export class LlmUnavailableError extends NaviError {
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super('llm_unavailable', code, message, options);
  }
}

/**
 * The model produced output Ollama could not use (a malformed tool call, an empty reply). Not
 * an outage: the agent asks again, and only when retries run out does it end the run (exit 1).
 */
export class ModelOutputError extends NaviError {
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super('error', code, message, options);
  }
}

/** Database could not be opened, migrated, locked or written: exit 1. */
export class StorageError extends NaviError {
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super('error', code, message, options);
  }
}

/**
 * A session, run, profile, memory or task the user named does not exist: exit 2, like every
 * other bad input, in every command (`sessions show`, `run -s`, `profiles show`, `run -p`…).
 */
export class NotFoundError extends NaviError {
  constructor(code: string, message: string) {
    super('invalid_input', code, message);
  }
}

export function isNaviError(err: unknown): err is NaviError {
  return err instanceof NaviError;
}

/** True when `err` is an abort caused by an AbortSignal (DOMException or node AbortError). */
export function isAbortError(err: unknown): boolean {
  return (
    typeof err === 'object' &&
    err !== null &&
    'name' in err &&
    ((err).name === 'AbortError' || (err).name === 'TimeoutError')
  );
}

/** One line, no stack: what the CLI prints for an unexpected error. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message.split('\n')[0] ?? err.name;
  return String(err);
}
