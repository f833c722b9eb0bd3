/**
 * `llm.keep_alive` as Ollama reads it. The request field is `api.Duration`
 * (ollama api/types.go, `(*Duration).UnmarshalJSON`): a JSON number is seconds (any negative
 * means "keep loaded forever"), a JSON string must pass Go's `time.ParseDuration`, and
 * anything else fails the bind, which `ChatHandler` (server/routes.go) answers with HTTP 400.
 * So the string "-1" or "3600" is a 400 from the server, while `OLLAMA_KEEP_ALIVE`
 * (envconfig/config.go, `KeepAlive`) takes a bare integer as seconds; navi accepts what the
 * environment variable accepts and sends bare integers as JSON numbers.
 */

/** What a valid keep_alive looks like; part of the config error message. */
export const KEEP_ALIVE_HINT =
  'must be a number of seconds (negative keeps the model loaded forever) or a Go duration such as "30m", "1h30m", "300ms", "0" or "-1m"';

/** Go's `time.ParseDuration` units (time/format.go `unitMap`), in nanoseconds. */
const UNIT_NS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  'µs': 1_000n, // U+00B5 micro sign
  'μs': 1_000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/** A Go `time.Duration` is an int64 of nanoseconds. */
const INT64_LIMIT = 1n << 63n;

/** A bare integer, as Go's `strconv.ParseInt(s, 10, 64)` reads it (envconfig `KeepAlive`). */
const BARE_INTEGER = /^[+-]?\d+$/;

/**
 * True when Go's `time.ParseDuration` accepts `s`: an optional sign, then "0" alone or one or
 * more `<decimal><unit>` parts ("1h30m", ".5h", "1.5s"), the total within an int64 of
 * nanoseconds. A number without a unit other than "0" is refused ("missing unit").
 */
export function isGoDuration(s: string): boolean {
  let rest = s;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1);
  }
  if (rest === '0') return true;
  if (rest === '') return false;
  let total = 0n;
  // Sticky: each part starts where the last ended (linear even on a megabyte of "1s1s…").
  const part = /(\d*)(?:\.(\d*))?([^\d.]+)/y;
  while (part.lastIndex < rest.length) {
    const m = part.exec(rest);
    if (m === null) return false;
    const [, int = '', frac, unitText = ''] = m;
    // "." alone is no number; "1." and ".5" are.
    if (int === '' && (frac === undefined || frac === '')) return false;
    // The unit runs to the next digit or dot, so "1hx" has the unknown unit "hx", as in Go.
    const unit = UNIT_NS[unitText];
    if (unit === undefined) return false;
    // Leading zeros are allowed; more than 19 significant digits overflow an int64 anyway.
    const digits = int.replace(/^0+/, '');
    if (digits.length > 19) return false;
    const v = BigInt(digits === '' ? '0' : digits);
    if (v > INT64_LIMIT / unit) return false;
    let ns = v * unit;
    if (frac !== undefined && frac !== '') ns += BigInt(Math.floor(Number(`0.${frac}`) * Number(unit)));
    total += ns;
    if (total > INT64_LIMIT) return false;
  }
  return negative || total < INT64_LIMIT;
}

/**
 * Seconds as Ollama converts them: `time.Duration(t * float64(time.Second))` for t ≥ 0; a value
 * whose nanoseconds do not fit an int64 has no defined conversion in Go, so it is refused.
 */
function secondsFit(seconds: number): boolean {
  return Number.isFinite(seconds) && (seconds < 0 || seconds * 1e9 < 2 ** 63);
}

/** Why `value` cannot be a keep_alive (the sentence for the config error), or undefined when it can. */
export function keepAliveProblem(value: unknown): string | undefined {
  if (typeof value === 'number') return secondsFit(value) ? undefined : KEEP_ALIVE_HINT;
  if (typeof value !== 'string') return KEEP_ALIVE_HINT;
  if (BARE_INTEGER.test(value)) return secondsFit(Number(value)) ? undefined : KEEP_ALIVE_HINT;
  return isGoDuration(value) ? undefined : KEEP_ALIVE_HINT;
}

/**
 * The `keep_alive` value to put in a chat request: numbers as they are, a bare integer string
 * ("-1", "3600") as that many seconds (a JSON number, because the server refuses it as a
 * string), a Go duration string ("30m", "-1m", "0") unchanged. Expects a value that passed
 * keepAliveProblem; idempotent.
 */
export function keepAliveWire(value: string | number): string | number {
  if (typeof value === 'number') return value;
  return BARE_INTEGER.test(value) ? Number(value) : value;
}
