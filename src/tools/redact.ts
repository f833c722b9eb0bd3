/**
 * Secret redaction (SPEC §10): values of secret-looking environment variables, and passwords in
 * URLs held by any variable, never reach the model, the database or any output through a tool.
 *
 * Output is often cut (the shell's head+tail cap, a long line in a search result): a secret the
 * cut splits is no longer whole, so replacing whole values would leave its first or last
 * characters behind. Code that cuts text redacts each side and then drops what could be the
 * beginning (or end) of a secret next to the cut: `redactBeforeCut` / `redactAfterCut`.
 */

/** Names that mark an environment variable's whole value as secret. */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|DATABASE_URL/i;

/** Shorter values are too likely to be ordinary words or numbers ("true", "1234") to redact. */
const MIN_SECRET_LENGTH = 6;

/** `scheme://user:password@` anywhere in a value (the password may hold `/`, not `@`). */
const URL_CREDENTIALS = /[a-z][a-z0-9+.-]*:\/\/[^\s:@/?#]*:([^\s@]+)@/gi;
/** `?password=…` / `&password=…` in a URL (libpq and postgres.js accept it). */
const URL_PASSWORD_PARAM = /[?&]password=([^&#\s]+)/gi;

/** One redaction: each occurrence of `find` becomes `replacement`. */
export interface SecretRule {
  find: string;
  replacement: string;
}

/** `text` percent-decoded, or itself when it is not valid percent-encoding. */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The redaction rules for one environment variable, in one place:
 * - a secret-looking name (KEY, TOKEN, SECRET, PASSWORD, PASSWD, DATABASE_URL): the whole value;
 * - a URL with a password in the value, whatever the name (`OLLAMA_HOST=http://u:p@h`): the
 *   password, as written and percent-decoded; a password too short to redact on its own is
 *   redacted where it stands, between `:` and `@`.
 * Values shorter than MIN_SECRET_LENGTH are never redacted on their own.
 */
export function secretRules(name: string, value: string): SecretRule[] {
  const tag = `[REDACTED:${name}]`;
  const rules: SecretRule[] = [];
  if (SECRET_NAME.test(name) && value.length >= MIN_SECRET_LENGTH) rules.push({ find: value, replacement: tag });
  const passwords = [...value.matchAll(URL_CREDENTIALS)].map((m) => ({ password: m[1] ?? '', inUserinfo: true }));
  for (const m of value.matchAll(URL_PASSWORD_PARAM)) passwords.push({ password: m[1] ?? '', inUserinfo: false });
  for (const { password, inUserinfo } of passwords) {
    for (const form of new Set([password, decoded(password)])) {
      if (form.length >= MIN_SECRET_LENGTH) rules.push({ find: form, replacement: tag });
      else if (inUserinfo && form === password) rules.push({ find: `:${form}@`, replacement: `:${tag}@` });
    }
  }
  return rules;
}

/** What tools are handed (`ToolContext.redact`): text in, text with the secrets replaced out. */
export type RedactFn = (text: string) => string;

/** A RedactFn that also knows what the secrets look like, to clean up around a cut. */
export interface Redactor extends RedactFn {
  /** Length of the longest secret, in UTF-16 units (0 when there is none). */
  readonly maxSecretLength: number;
  /** Redacted `text`, followed by a cut: its end is dropped where it could be the start of a secret. */
  beforeCut(text: string): string;
  /** Redacted `text`, preceded by a cut: its start is dropped where it could be the end of a secret. */
  afterCut(text: string): string;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Length of the longest end of `text` that is the start (not the whole) of one of `secrets`. */
function partialAtEnd(text: string, secrets: readonly string[]): number {
  let longest = 0;
  for (const secret of secrets) {
    const first = secret.charAt(0);
    // Candidates: positions among the last secret.length - 1 characters holding its first character.
    for (let at = Math.max(0, text.length - secret.length + 1); at < text.length; at++) {
      const k = text.length - at;
      if (k <= longest) break;
      if (text.charAt(at) === first && secret.startsWith(text.slice(at))) {
        longest = k;
        break;
      }
    }
  }
  return longest;
}

/** Length of the longest start of `text` that is the end (not the whole) of one of `secrets`. */
function partialAtStart(text: string, secrets: readonly string[]): number {
  let longest = 0;
  for (const secret of secrets) {
    const last = secret.charAt(secret.length - 1);
    for (let k = Math.min(secret.length - 1, text.length); k > longest; k--) {
      if (text.charAt(k - 1) === last && secret.endsWith(text.slice(0, k))) {
        longest = k;
        break;
      }
    }
  }
  return longest;
}

/** `text` shortened by `drop` units at its end, not splitting a surrogate pair. */
function dropEnd(text: string, drop: number): string {
  let end = text.length - drop;
  if (end > 0 && /[\uD800-\uDBFF]/.test(text.charAt(end - 1))) end--;
  return text.slice(0, end);
}

/** `text` shortened by `drop` units at its start, not splitting a surrogate pair. */
function dropStart(text: string, drop: number): string {
  let start = drop;
  if (start < text.length && /[\uDC00-\uDFFF]/.test(text.charAt(start))) start++;
  return text.slice(start);
}

/**
 * Builds a redactor from the `secretRules` of every variable in `env`. One precompiled regex,
 * longest first so a secret containing another is replaced whole.
 */
export function createRedactor(env: Record<string, string | undefined>): Redactor {
  const replacementOf = new Map<string, string>();
  for (const name of Object.keys(env).sort()) {
    const value = env[name];
    if (value === undefined) continue;
    for (const rule of secretRules(name, value)) if (!replacementOf.has(rule.find)) replacementOf.set(rule.find, rule.replacement);
  }
  const values = [...replacementOf.keys()].sort((a, b) => b.length - a.length);
  const pattern = values.length === 0 ? undefined : new RegExp(values.map(escapeRegExp).join('|'), 'g');
  const redact: RedactFn = pattern === undefined ? (text) => text : (text) => text.replace(pattern, (value) => replacementOf.get(value) ?? '[REDACTED]');
  // Whole secrets are replaced first; what is left next to the cut can only be a piece of one.
  return Object.assign(redact, {
    maxSecretLength: values[0]?.length ?? 0,
    beforeCut: (text: string): string => {
      const redacted = redact(text);
      return dropEnd(redacted, partialAtEnd(redacted, values));
    },
    afterCut: (text: string): string => {
      const redacted = redact(text);
      return dropStart(redacted, partialAtStart(redacted, values));
    },
  });
}

function isRedactor(redact: RedactFn): redact is Redactor {
  const r = redact as Partial<Redactor>;
  return typeof r.beforeCut === 'function' && typeof r.afterCut === 'function';
}

/**
 * `text` redacted for display before a cut (the rest of the original is dropped): no start of
 * a secret the cut split survives. A plain RedactFn (tests) only redacts.
 */
export function redactBeforeCut(redact: RedactFn, text: string): string {
  return isRedactor(redact) ? redact.beforeCut(text) : redact(text);
}

/** `text` redacted for display after a cut: no end of a secret the cut split survives. */
export function redactAfterCut(redact: RedactFn, text: string): string {
  return isRedactor(redact) ? redact.afterCut(text) : redact(text);
}
