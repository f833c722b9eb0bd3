/**
 * The fake Ollama server's script format, the wire lines it produces, and the few Go behaviours
 * (time.ParseDuration, encoding/json syntax errors, model-name qualification) the real server's
 * answers depend on. JSON-serialisable so the same script drives in-process tests, the standalone
 * `fake-ollama-cli.ts` and benchmarks. Sources cited are files of github.com/ollama/ollama.
 */

/** A model the fake serves; any other name gets Ollama's 404. */
export interface FakeModel {
  name: string;
  /** Reported by `/api/show` as `model_info["<arch>.context_length"]`; omitted when absent. */
  context_length?: number;
  /**
   * The trained context the runner clamps `num_ctx` to (llm/server.go 111-117) when `/api/show`
   * does not report it (`context_length` absent: a server older than model_info, or a GGUF
   * without the key): navi cannot know it before the server refuses a prompt for size.
   */
  trained_context?: number;
  /**
   * `/api/show` capabilities; default `['completion', 'tools', 'thinking']`. `/api/chat` enforces
   * them as ChatHandler does: `think` on a model without `thinking`, `tools` on one without
   * `tools`, and any chat on one without `completion` are 400s.
   */
  capabilities?: string[];
  /** Bytes of the loaded model (`/api/ps` `size`); default `DEFAULT_MODEL_SIZE`. */
  size?: number;
  /**
   * Bytes of it in GPU memory (`/api/ps` `size_vram`); default all of it. Less than `size`: the
   * rest spilled to system memory and runs on the CPU (server/sched.go, llm/memory.go).
   */
  size_vram?: number;
}

export interface FakeScript {
  /** Default `[{name: 'qwen3:8b', context_length: 40960}]`. */
  models?: FakeModel[];
  /** Served in order to successive `/api/chat` calls. */
  turns: FakeTurn[];
  /** When the turns run out: `'done'` (default) answers a plain text `done.` turn, `'error'` a 500. */
  on_exhausted?: 'done' | 'error';
  /** `/api/version`; default `DEFAULT_VERSION`. */
  version?: string;
  /**
   * Give every tool call without an `id` one in the real format (`call_` + 8 of [a-z0-9]), as
   * Ollama ≥ 0.12.10 does (server/routes.go toolCallId). Off by default for older tests.
   */
  tool_call_ids?: boolean;
  /**
   * Behave as a server from before `truncate` existed (ollama/ollama#12519; reverted in #12545,
   * re-landed later): Go's encoding/json drops the unknown field, so a prompt larger than the
   * context is truncated silently (server/prompt.go 35-78) even when navi sends `truncate: false`.
   */
  ignores_truncate?: boolean;
}

export interface FakeToolCall {
  name: string;
  /** An object, or a string to simulate a model that produced invalid JSON. */
  arguments: unknown;
  /** Sent as `tool_calls[].id` when set (newer Ollama versions send ids). */
  id?: string;
}

export interface FakeTurn {
  thinking?: string;
  content?: string;
  tool_calls?: FakeToolCall[];
  /** Split thinking and content into chunks of N characters; default 8. */
  chunk_size?: number;
  /**
   * Replaces the chunking of `thinking`/`content`: each entry is exactly one NDJSON line, both
   * fields on the same line when both are set (server/routes.go ChatHandler sets Thinking and
   * Content on one ChatResponse; built-in parsers return both from one Add call).
   */
  lines?: Array<{ thinking?: string; content?: string }>;
  /**
   * Silence (no bytes, socket open) after the thinking/content lines, before the line that carries
   * the tool calls (or the parse error, or the done line): Ollama's parsers buffer a call until it
   * is complete (tools/tools.go Parser.Add, model/parsers/qwen3.go, harmony/harmonyparser.go Add).
   */
  silent_call_ms?: number;
  /**
   * The model wrote a malformed call; this is its raw text. After the thinking/content lines the
   * stream ends with `{"error":"error parsing tool call: raw='…', err=…"}` and no done line
   * (harmony/harmonyparser.go HarmonyMessageHandler.Add; server/routes.go streamResponse).
   * `tool_calls` are not sent.
   */
  tool_parse_error?: string;
  /**
   * Whose message `tool_parse_error` carries; default `harmony` (gpt-oss). See
   * `toolParseErrorMessage` for each parser's text.
   */
  tool_parse_error_parser?: 'harmony' | 'qwen3' | 'qwen3coder' | 'glm46' | 'laguna';
  /**
   * With `tool_parse_error`: nothing was streamed before the failure, so the answer is HTTP 500
   * `{"error": …}` with no line (server/routes.go streamResponse, `!c.Writer.Written()`). The
   * turn's thinking/content are not sent.
   */
  tool_parse_error_http?: boolean;
  /**
   * The tool calls and the last content piece (in `lines` mode: the last line) come inside the
   * final `done: true` line, as harmony emits them (harmony/harmonyparser.go Add parses calls
   * only when done; server/routes.go ChatHandler sends that chunk with Done set).
   */
  calls_in_done?: boolean;
  /**
   * One chunk per call, each with its `function.index` 0, 1, … (tools/tools.go parseToolCall
   * returns each call as soon as its JSON is complete, Index = p.n). Ignored with `calls_in_done`.
   */
  split_calls?: boolean;
  /** Delay before the headers, like real Ollama during model load and prefill. */
  first_chunk_delay_ms?: number;
  /** Delay between chunks. */
  chunk_delay_ms?: number;
  /** Stop sending after N lines but keep the socket open (0: headers only, no line). */
  stall_after_chunks?: number;
  /** Destroy the socket after N lines. */
  drop_after_chunks?: number;
  /**
   * Ollama restarts (an auto-update at 3 am, `systemctl restart ollama`): after this turn's
   * lines (with `drop_after_chunks`: cut mid-reply) every connection is closed and nothing
   * listens for this many milliseconds (connections are refused), then the server answers again
   * on the same port with nothing loaded (/api/ps empty). The script goes on where it was.
   */
  restart_ms?: number;
  /**
   * Played whole whatever `options.num_predict` says: a server (or proxy) that does not honour
   * the bound, for faults no real model could produce within one (a 20 MB tool argument).
   */
  ignores_num_predict?: boolean;
  /** Send `{"error": error_line}` after the first `error_after_chunks` lines and end. */
  error_line?: string;
  /** Lines sent before `error_line` or the garbage; default 1. */
  error_after_chunks?: number;
  /** Answer with this status and `{"error": error_message}` (404: Ollama's model-not-found text). */
  http_status?: number;
  /** Message for `http_status`; default per status. */
  error_message?: string;
  /** With `http_status`: send this raw body as `text/html` instead of JSON (a proxy's error page). */
  error_body_text?: string;
  /**
   * End the 200 stream cleanly without the `done: true` line: what llm/llama_server.go 1690-1703
   * does after 31 identical tokens in a row (the repeat-token abort returns ctx.Err(), nil, and
   * ChatHandler closes the channel with neither a final response nor an error).
   */
  no_done?: boolean;
  /** Send non-JSON lines after the first `error_after_chunks` lines. */
  garbage?: boolean;
  /**
   * Default: ceil(request body bytes / 4), less what the server truncated to fit the loaded
   * context (fake-ollama-context.ts).
   */
  prompt_eval_count?: number;
  /** Default: ceil(output characters / 4). */
  eval_count?: number;
  /** Default `stop`; `length` when the reply was cut (llm/server.go DoneReason.String). */
  done_reason?: string;
  /** After the scripted thinking, keep streaming thinking chunks until the client disconnects. */
  endless_thinking?: boolean;
  /** Tool names the request should offer; a difference is recorded in `fake.mismatches`. */
  expect_tools?: string[];
}

export const DEFAULT_MODELS: FakeModel[] = [{ name: 'qwen3:8b', context_length: 40960 }];

/** What `/api/show` reports for a model without `capabilities`. */
export const DEFAULT_CAPABILITIES = ['completion', 'tools', 'thinking'];

/** The release the fake follows (v0.33.0; the audit read the tree at v0.33.0-rc2 + fb3076099). */
export const DEFAULT_VERSION = '0.33.0';

/** `size` of a model in `/api/tags` and `/api/ps` when the script sets none (an 8B Q4_K_M). */
export const DEFAULT_MODEL_SIZE = 5_200_000_000;

/** The turn served once the script runs out (`on_exhausted: 'done'`). */
export const EXHAUSTED_TURN: FakeTurn = { content: 'done.' };

/** Ollama's chunking is per token; 8 characters gives several chunks for short test texts. */
const DEFAULT_CHUNK_SIZE = 8;

type WireMessage = Record<string, unknown>;

/**
 * `message.tool_calls` as Ollama sends them: api/types.go ToolCall `{id?, function: {index,
 * name, arguments}}`; `index` is never omitted (no omitempty since v0.12.6).
 */
export function wireToolCalls(calls: FakeToolCall[], idFor?: () => string, firstIndex = 0): WireMessage[] {
  return calls.map((call, i) => {
    const id = call.id ?? idFor?.();
    return {
      ...(id !== undefined && id !== '' ? { id } : {}),
      function: { index: firstIndex + i, name: call.name, arguments: call.arguments },
    };
  });
}

/** A turn's messages: the visible lines, the tool-call chunks, and the done line's message. */
export interface TurnPlan {
  visible: WireMessage[];
  calls: WireMessage[];
  done: WireMessage;
}

/** How a turn's output is spread over lines (see the FakeTurn fields for the sources). */
export function turnPlan(turn: FakeTurn, idFor?: () => string): TurnPlan {
  const visible = visibleMessages(turn);
  const calls = turn.tool_calls ?? [];
  const done: WireMessage = { role: 'assistant', content: '' };
  if (turn.calls_in_done === true) {
    const last = turn.lines !== undefined ? visible.pop() : popLastContent(visible);
    if (last !== undefined) Object.assign(done, last);
    if (calls.length > 0) done.tool_calls = wireToolCalls(calls, idFor);
    return { visible, calls: [], done };
  }
  if (calls.length === 0) return { visible, calls: [], done };
  // server/routes.go ChatHandler: a chunk that carries calls has `content: ""`.
  const chunks =
    turn.split_calls === true
      ? calls.map((call, i) => ({ role: 'assistant', content: '', tool_calls: wireToolCalls([call], idFor, i) }))
      : [{ role: 'assistant', content: '', tool_calls: wireToolCalls(calls, idFor) }];
  return { visible, calls: chunks, done };
}

/** The `message` objects of a turn's non-final lines, in Ollama's order. */
export function turnMessages(turn: FakeTurn, idFor?: () => string): WireMessage[] {
  const plan = turnPlan(turn, idFor);
  return [...plan.visible, ...plan.calls];
}

/** The whole reply as `stream: false` gives it (server/routes.go writeChatResponse). */
export function wholeMessage(turn: FakeTurn, offeredTools: boolean, idFor?: () => string): WireMessage {
  const parts = turn.lines ?? [{ thinking: turn.thinking, content: turn.content }];
  const thinking = parts.map((p) => p.thinking ?? '').join('');
  const message: WireMessage = { role: 'assistant', content: parts.map((p) => p.content ?? '').join('') };
  if (thinking !== '') message.thinking = thinking;
  // writeChatResponse collects tool calls only when the request had `tools`.
  if (offeredTools && turn.tool_calls !== undefined && turn.tool_calls.length > 0) {
    message.tool_calls = wireToolCalls(turn.tool_calls, idFor);
  }
  return message;
}

/**
 * The counts and timings of the final line (api/types.go ChatResponse + Metrics, in field
 * order). `promptTokens`: the prompt as the server kept it (fake-ollama-context.ts fitPrompt).
 */
export function doneFields(turn: FakeTurn, promptTokens: number): Record<string, unknown> {
  const parts = turn.lines ?? [{ thinking: turn.thinking, content: turn.content }];
  const outputChars =
    parts.reduce((n, p) => n + (p.thinking ?? '').length + (p.content ?? '').length, 0) +
    (turn.tool_calls !== undefined ? JSON.stringify(wireToolCalls(turn.tool_calls)).length : 0);
  return {
    done: true,
    done_reason: turn.done_reason ?? 'stop',
    total_duration: 1_000_000,
    load_duration: 100_000,
    prompt_eval_count: turn.prompt_eval_count ?? promptTokens,
    prompt_eval_duration: 500_000,
    eval_count: turn.eval_count ?? Math.ceil(outputChars / 4),
    eval_duration: 400_000,
  };
}

/**
 * The error text of a malformed call, per parser:
 *  - harmony/harmonyparser.go HarmonyMessageHandler.Add: `error parsing tool call: raw='%s', err=%w`;
 *  - model/parsers/qwen3.go parseQwen3ToolCall: `failed to parse JSON: %w`;
 *  - model/parsers/laguna.go 500: `failed to parse Laguna JSON tool call: %w`
 *    (the wrapped error is encoding/json's for `raw` in these three);
 *  - model/parsers/qwen3coder.go 229-238 (also qwen3.5/3.8, `qwen35.go` 105-110, and nemotron):
 *    encoding/xml's own error, unwrapped, e.g. `XML syntax error on line 3: unexpected EOF`;
 *  - model/parsers/glm46.go 102: `incomplete GLM tool call: %v` (the XML error).
 */
export function toolParseErrorMessage(turn: FakeTurn): string {
  const raw = turn.tool_parse_error ?? '';
  const parser = turn.tool_parse_error_parser ?? 'harmony';
  if (parser === 'qwen3coder' || parser === 'glm46') {
    // encoding/xml reports an element left open at the end of the input as unexpected EOF, on
    // the line the input ends on.
    const xml = `XML syntax error on line ${raw.split('\n').length}: unexpected EOF`;
    return parser === 'glm46' ? `incomplete GLM tool call: ${xml}` : xml;
  }
  // Valid JSON that is not an object fails inside the ordered-map library, whose exact text is
  // not reproduced here; script a syntactically broken `raw` for an exact message.
  const err = goJsonSyntaxError(raw) ?? 'json: cannot unmarshal into Go value of type map[string]interface {}';
  if (parser === 'qwen3') return `failed to parse JSON: ${err}`;
  if (parser === 'laguna') return `failed to parse Laguna JSON tool call: ${err}`;
  return `error parsing tool call: raw='${raw}', err=${err}`;
}

/** Ollama's architecture prefix for `model_info` keys (`qwen3:8b` → `qwen3`). */
export function architectureOf(model: string): string {
  const base = model.split(':')[0] ?? model;
  return base.replace(/[^a-z0-9]/gi, '').toLowerCase() || 'llama';
}

/** `details` of `/api/tags` and `/api/show` entries. */
export function modelDetails(arch: string): Record<string, unknown> {
  return {
    parent_model: '',
    format: 'gguf',
    family: arch,
    families: [arch],
    parameter_size: '8.2B',
    quantization_level: 'Q4_K_M',
  };
}

/** One `/api/tags` entry. */
export function tagEntry(model: FakeModel): Record<string, unknown> {
  return {
    name: model.name,
    model: model.name,
    modified_at: new Date(0).toISOString(),
    size: model.size ?? DEFAULT_MODEL_SIZE,
    digest: 'sha256:0000000000000000000000000000000000000000000000000000000000000000',
    details: modelDetails(architectureOf(model.name)),
  };
}

/**
 * JSON as Go's encoding/json writes it: `<`, `>`, `&`, U+2028 and U+2029 escaped (every line
 * real Ollama sends goes through json.Marshal or json.Encoder with HTML escaping on).
 */
export function goJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * types/model/name.go ParseName(..).String(): the fully qualified name scheduleRunner's
 * capability errors use (`llama3.1` → `registry.ollama.ai/library/llama3.1:latest`).
 */
export function qualifiedModelName(name: string): string {
  let rest = name;
  let tag = 'latest';
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1) || tag;
    rest = rest.slice(0, colon);
  }
  const parts = rest.split('/');
  const model = parts.pop() ?? '';
  const namespace = parts.pop() || 'library';
  const host = parts.join('/') || 'registry.ollama.ai';
  return `${host}/${namespace}/${model}:${tag}`;
}

/**
 * api/types.go Duration.UnmarshalJSON: the 400 text for a bad `keep_alive`, undefined when
 * valid. Numbers are seconds (negative: forever); strings go through time.ParseDuration.
 */
export function keepAliveError(value: unknown): string | undefined {
  if (value === null || typeof value === 'number') return undefined;
  if (typeof value === 'string') {
    const parsed = parseGoDuration(value);
    return 'error' in parsed ? parsed.error : undefined;
  }
  // `reflect.TypeOf(v)` of what encoding/json decoded into `any`.
  const goType = typeof value === 'boolean' ? 'bool' : Array.isArray(value) ? '[]interface {}' : 'map[string]interface {}';
  return `Unsupported type: '${goType}'`;
}

const THINK_LEVELS = ['high', 'medium', 'low', 'max'];

/** api/types.go ThinkValue.UnmarshalJSON: the 400 text for a bad `think`, undefined when valid. */
export function thinkError(value: unknown): string | undefined {
  if (value === null || typeof value === 'boolean') return undefined;
  if (typeof value === 'string') {
    return THINK_LEVELS.includes(value)
      ? undefined
      : `invalid think value: ${JSON.stringify(value)} (must be "high", "medium", "low", "max", true, or false)`;
  }
  return 'think must be a boolean or string ("high", "medium", "low", "max", true, or false)';
}

/** api/types.go ThinkValue.Bool: true, or any valid level string, asks for thinking. */
export function thinkRequested(value: unknown): boolean {
  return value === true || (typeof value === 'string' && THINK_LEVELS.includes(value));
}

const GO_DURATION_UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  'µs': 1_000n, // U+00B5 micro sign
  'μs': 1_000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const MAX_DURATION = 1n << 63n;

/**
 * Go's time.ParseDuration (time/format.go): `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, or "0" alone.
 * Returns nanoseconds, or Go's exact error text.
 */
export function parseGoDuration(text: string): { ns: number } | { error: string } {
  const invalid = { error: `time: invalid duration ${goTimeQuote(text)}` };
  let s = text;
  let negative = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    negative = s.startsWith('-');
    s = s.slice(1);
  }
  if (s === '0') return { ns: 0 };
  if (s === '') return invalid;
  let total = 0n;
  while (s !== '') {
    if (!/^[0-9.]/.test(s)) return invalid;
    const whole = /^[0-9]*/.exec(s)?.[0] ?? '';
    s = s.slice(whole.length);
    let fraction = '';
    if (s.startsWith('.')) {
      fraction = /^\.([0-9]*)/.exec(s)?.[1] ?? '';
      s = s.slice(1 + fraction.length);
    }
    if (whole === '' && fraction === '') return invalid; // ".s"
    const unitText = /^[^0-9.]*/.exec(s)?.[0] ?? '';
    if (unitText === '') return { error: `time: missing unit in duration ${goTimeQuote(text)}` };
    s = s.slice(unitText.length);
    const unit = GO_DURATION_UNITS[unitText];
    if (unit === undefined) {
      return { error: `time: unknown unit ${goTimeQuote(unitText)} in duration ${goTimeQuote(text)}` };
    }
    const v = BigInt(whole === '' ? '0' : whole);
    if (v > MAX_DURATION / unit) return invalid;
    let part = v * unit;
    if (fraction !== '') {
      const digits = fraction.slice(0, 18); // leadingFraction stops growing before overflow
      part += BigInt(Math.floor(Number(digits) * (Number(unit) / 10 ** digits.length)));
      if (part > MAX_DURATION) return invalid;
    }
    total += part;
    if (total > MAX_DURATION) return invalid;
  }
  if (!negative && total > MAX_DURATION - 1n) return invalid;
  return { ns: Number(negative ? -total : total) };
}

/** time/format.go quote: non-ASCII and control bytes as `\xNN`, `"` and `\` escaped. */
function goTimeQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    if (code >= 0x80 || code < 0x20) {
      for (const byte of Buffer.from(ch, 'utf8')) out += `\\x${byte.toString(16).padStart(2, '0')}`;
    } else {
      out += ch === '"' || ch === '\\' ? `\\${ch}` : ch;
    }
  }
  return `${out}"`;
}

/**
 * encoding/json checkValid (scanner.go): Go's SyntaxError text for `text`, or undefined when it
 * is valid JSON. A port of the scanner's states, so the messages (`invalid character 'x' after
 * object key`, `unexpected end of JSON input`, …) match what Ollama wraps into its errors.
 */
export function goJsonSyntaxError(text: string): string | undefined {
  type Step = (c: number) => string | undefined;
  const stack: Array<'key' | 'value' | 'array'> = [];
  let endTop = false;
  const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
  const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
  const isHex = (c: number): boolean => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
  const fail = (c: number, context: string): string => `invalid character ${goQuoteChar(c)} ${context}`;
  let step: Step;
  const literal = (rest: string, name: string): Step => {
    const next = (c: number): string | undefined => {
      if (c !== rest.charCodeAt(0)) return fail(c, `in literal ${name} (expecting '${rest[0] ?? ''}')`);
      step = rest.length === 1 ? endValue : literal(rest.slice(1), name);
      return undefined;
    };
    return next;
  };
  const beginValue: Step = (c) => {
    if (isSpace(c)) return undefined;
    if (c === 0x7b) return (stack.push('key'), (step = beginKeyOrEmpty), undefined);
    if (c === 0x5b) return (stack.push('array'), (step = beginValueOrEmpty), undefined);
    if (c === 0x22) return ((step = inString), undefined);
    if (c === 0x2d) return ((step = neg), undefined);
    if (c === 0x30) return ((step = zero), undefined);
    if (isDigit(c)) return ((step = digits), undefined);
    if (c === 0x74) return ((step = literal('rue', 'true')), undefined);
    if (c === 0x66) return ((step = literal('alse', 'false')), undefined);
    if (c === 0x6e) return ((step = literal('ull', 'null')), undefined);
    return fail(c, 'looking for beginning of value');
  };
  const beginValueOrEmpty: Step = (c) => {
    if (isSpace(c)) return undefined;
    if (c === 0x5d) return endValue(c);
    return beginValue(c);
  };
  const beginKeyOrEmpty: Step = (c) => {
    if (isSpace(c)) return undefined;
    if (c === 0x7d) return ((stack[stack.length - 1] = 'value'), endValue(c));
    return beginKey(c);
  };
  const beginKey: Step = (c) => {
    if (isSpace(c)) return undefined;
    if (c === 0x22) return ((step = inString), undefined);
    return fail(c, 'looking for beginning of object key string');
  };
  const endTopStep: Step = (c) => (isSpace(c) ? undefined : fail(c, 'after top-level value'));
  const endValue: Step = (c) => {
    const top = stack[stack.length - 1];
    if (top === undefined) return ((step = endTopStep), (endTop = true), endTopStep(c));
    if (isSpace(c)) return ((step = endValue), undefined);
    if (top === 'key') {
      if (c === 0x3a) return ((stack[stack.length - 1] = 'value'), (step = beginValue), undefined);
      return fail(c, 'after object key');
    }
    if (top === 'value') {
      if (c === 0x2c) return ((stack[stack.length - 1] = 'key'), (step = beginKey), undefined);
      if (c === 0x7d) return (stack.pop(), (step = endValue), undefined);
      return fail(c, 'after object key:value pair');
    }
    if (c === 0x2c) return ((step = beginValue), undefined);
    if (c === 0x5d) return (stack.pop(), (step = endValue), undefined);
    return fail(c, 'after array element');
  };
  const inString: Step = (c) => {
    if (c === 0x22) return ((step = endValue), undefined);
    if (c === 0x5c) return ((step = inEscape), undefined);
    return c < 0x20 ? fail(c, 'in string literal') : undefined;
  };
  const inEscape: Step = (c) => {
    if ('bfnrt\\/"'.includes(String.fromCharCode(c))) return ((step = inString), undefined);
    if (c === 0x75) return ((step = hex(4)), undefined);
    return fail(c, 'in string escape code');
  };
  const hex = (left: number): Step => (c) => {
    if (!isHex(c)) return fail(c, 'in \\u hexadecimal character escape');
    step = left === 1 ? inString : hex(left - 1);
    return undefined;
  };
  const neg: Step = (c) => {
    if (c === 0x30) return ((step = zero), undefined);
    if (isDigit(c)) return ((step = digits), undefined);
    return fail(c, 'in numeric literal');
  };
  const digits: Step = (c) => (isDigit(c) ? undefined : zero(c));
  const zero: Step = (c) => {
    if (c === 0x2e) return ((step = dot), undefined);
    if (c === 0x65 || c === 0x45) return ((step = exponent), undefined);
    return endValue(c);
  };
  const dot: Step = (c) => (isDigit(c) ? ((step = dotDigits), undefined) : fail(c, 'after decimal point in numeric literal'));
  const dotDigits: Step = (c) => {
    if (isDigit(c)) return undefined;
    if (c === 0x65 || c === 0x45) return ((step = exponent), undefined);
    return endValue(c);
  };
  const exponent: Step = (c) => (c === 0x2b || c === 0x2d ? ((step = exponentSign), undefined) : exponentSign(c));
  const exponentSign: Step = (c) => (isDigit(c) ? ((step = exponentDigits), undefined) : fail(c, 'in exponent of numeric literal'));
  const exponentDigits: Step = (c) => (isDigit(c) ? undefined : endValue(c));
  step = beginValue;
  for (const byte of Buffer.from(text, 'utf8')) {
    const error = step(byte);
    if (error !== undefined) return error;
  }
  // scanner.eof: feed one space; an error there is reported as is (`in literal true (expecting 'e')`).
  if (endTop) return undefined;
  const error = step(0x20);
  if (error !== undefined) return error;
  return endTop ? undefined : 'unexpected end of JSON input';
}

/** encoding/json quoteChar: the byte as a Go rune literal. */
function goQuoteChar(c: number): string {
  if (c === 0x27) return `'\\''`;
  if (c === 0x22) return `'"'`;
  const named: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r', 0x5c: '\\\\' };
  if (named[c] !== undefined) return `'${named[c]}'`;
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, '0')}'`;
  // strconv.Quote(string(rune(c))): U+0080..U+00A0 and the soft hyphen are not printable.
  if ((c >= 0x80 && c <= 0xa0) || c === 0xad) return `'\\u${c.toString(16).padStart(4, '0')}'`;
  return `'${String.fromCharCode(c)}'`;
}

function visibleMessages(turn: FakeTurn): WireMessage[] {
  if (turn.lines !== undefined) {
    // api/types.go Message: `content` always present, `thinking` omitempty.
    return turn.lines.map((l) => ({
      role: 'assistant',
      content: l.content ?? '',
      ...(l.thinking !== undefined && l.thinking !== '' ? { thinking: l.thinking } : {}),
    }));
  }
  const size = Math.max(1, turn.chunk_size ?? DEFAULT_CHUNK_SIZE);
  const messages: WireMessage[] = [];
  for (const piece of split(turn.thinking ?? '', size)) {
    messages.push({ role: 'assistant', content: '', thinking: piece });
  }
  for (const piece of split(turn.content ?? '', size)) {
    messages.push({ role: 'assistant', content: piece });
  }
  return messages;
}

function popLastContent(messages: WireMessage[]): WireMessage | undefined {
  const last = messages.at(-1);
  return last !== undefined && last.thinking === undefined ? messages.pop() : undefined;
}

function split(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

/** Characters per token the fake counts output with (as `doneFields` does). */
const FAKE_CHARS_PER_TOKEN = 4;

/**
 * The turn as a reply bounded by `options.num_predict` plays it: llama-server stops after
 * `n_predict` tokens (llm/llama_server.go 2156 sends it; 1715-1716 maps `stop_type` "limit" to
 * done_reason "length"), so the reply is cut there — thinking first, then content, and a tool
 * call not yet finished is never emitted. Unbounded (absent, 0 or negative: Ollama's -1) or a
 * reply that fits: the turn unchanged. Scripted failures are left alone.
 */
export function boundedTurn(turn: FakeTurn, numPredict: unknown): FakeTurn {
  if (typeof numPredict !== 'number' || numPredict <= 0 || turn.lines !== undefined) return turn;
  if (turn.http_status !== undefined || turn.tool_parse_error !== undefined || turn.ignores_num_predict === true) return turn;
  const budget = Math.floor(numPredict) * FAKE_CHARS_PER_TOKEN;
  const thinking = turn.thinking ?? '';
  const content = turn.content ?? '';
  const calls = turn.tool_calls !== undefined ? JSON.stringify(wireToolCalls(turn.tool_calls)).length : 0;
  if (thinking.length + content.length + calls <= budget) return turn;
  const { tool_calls: _cut, thinking: _thinking, ...rest } = turn;
  const keptThinking = thinking.slice(0, budget);
  const keptContent = content.slice(0, Math.max(0, budget - keptThinking.length));
  return {
    ...rest,
    ...(keptThinking !== '' && { thinking: keptThinking }),
    content: keptContent,
    done_reason: 'length',
    eval_count: Math.floor(numPredict),
  };
}
