/**
 * Ollama's error texts → what they mean for navi (src/llm/server-error-class.ts), with the real
 * texts of today's server (github.com/ollama/ollama v0.33, file and line beside each), and the
 * same texts through the adapter against the fake server.
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError, LlmUnavailableError, ModelOutputError } from '../../src/errors.js';
import { ContextOverflowError, isTransientOutage } from '../../src/llm/ollama-errors.js';
import { classifyServerError, overflowSizes, readableServerText, type ServerErrorClass } from '../../src/llm/server-error-class.js';
import { fakeOllama } from '../support/fake-ollama-harness.js';
import type { FakeScript, FakeTurn } from '../support/fake-ollama.js';
import { chatRequest, clientFor, MODEL } from './llm-test-helpers.js';

const LLAMA_OVERFLOW =
  '{"error":{"code":400,"message":"request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}';

/** [text, HTTP status (undefined: an error line inside the 200 stream), class, source]. */
const TABLE: Array<[string, number | undefined, ServerErrorClass, string]> = [
  // The model's mistakes: parser texts, mid-stream or as the 500 before any line.
  ['XML syntax error on line 3: unexpected EOF', undefined, 'model_output', 'model/parsers/qwen3coder.go 229-238 (raw encoding/xml)'],
  ['XML syntax error on line 1: element <parameter> closed by </function>', 500, 'model_output', 'qwen3coder.go, before any line'],
  ['incomplete GLM tool call: XML syntax error on line 2: unexpected EOF', undefined, 'model_output', 'model/parsers/glm46.go 102'],
  ['tool "read_fil" is not declared', undefined, 'model_output', 'glm46.go 174'],
  ['required argument "path" is missing for tool "read_file"', undefined, 'model_output', 'glm46.go 188'],
  ['mismatched arg_key and arg_value counts: 2 keys, 1 values', undefined, 'model_output', 'glm46.go 163'],
  ['failed to parse Laguna JSON tool call: unexpected end of JSON input', undefined, 'model_output', 'model/parsers/laguna.go 500'],
  ['failed to parse Laguna JSON tool call arguments: invalid character \'}\'', 500, 'model_output', 'laguna.go 547'],
  ["error parsing tool call: raw='{\"path\": ', err=unexpected end of JSON input", undefined, 'model_output', 'harmony/harmonyparser.go'],
  ['failed to parse JSON: unexpected end of JSON input', undefined, 'model_output', 'model/parsers/qwen3.go'],
  ['llama-server returned invalid tool call arguments for "write_file": unexpected EOF', undefined, 'model_output', 'llm/llama_server.go 2120 (native)'],
  ['some parser text from a release after this one', undefined, 'model_output', 'anything else mid-stream'],
  // Outages: the runner, llama-server, transport, memory.
  ['model runner has unexpectedly stopped, this may be due to resource limitations or an internal error, check ollama server logs for details', 500, 'outage', 'llm/llama_server.go 1644'],
  ['model runner has unexpectedly stopped, this may be due to resource limitations or an internal error, check ollama server logs for details: CUDA error', undefined, 'outage', 'llama_server.go 1642'],
  ['an error was encountered while running the model: unexpected EOF', undefined, 'outage', 'llama_server.go 1766'],
  ['llama-server process has terminated: exit status 2', 500, 'outage', 'llama_server.go 1306-1325'],
  ['llama runner process has terminated: signal: killed', undefined, 'outage', 'before v0.30'],
  ['timed out waiting for llama-server to start - loading tensors', 500, 'outage', 'llama_server.go 1336'],
  ['llama-server reported out-of-memory during startup: failed to allocate buffer', 500, 'outage', 'llama_server.go 1372'],
  ['error reading llama-server response: read tcp: connection reset by peer', undefined, 'outage', 'llama_server.go 1768'],
  ['llama-server error: {"error":"loading model"}', 500, 'outage', 'llama_server.go 1250'],
  ['CUDA error: out of memory', 500, 'outage', 'ggml OOM'],
  ['model requires more system memory (12.1 GiB) than is available (8.0 GiB)', 500, 'outage', 'llm/memory.go'],
  ['<html><body>Internal Server Error</body></html>', 500, 'outage', 'a proxy in front of Ollama'],
  ['<html><body><h1>502 Bad Gateway</h1></body></html>', 502, 'outage', 'a proxy, Ollama down'],
  ['upstream request timeout', 504, 'outage', 'a gateway'],
  // Busy: worth waiting out.
  ['server busy, please try again.  maximum pending requests exceeded', 503, 'busy', 'server/sched.go 88 ErrMaxQueue'],
  ['too many requests', 429, 'busy', 'a rate limit (ollama.com)'],
  // The prompt does not fit.
  [LLAMA_OVERFLOW, 400, 'context_overflow', 'llama.cpp server-context.cpp via llama_server.go 1654'],
  ['the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length', 400, 'context_overflow', 'llama_server.go 295-300'],
  // Refused for good: exit 2.
  ['option "num_ctx" must be of type integer', 400, 'refused', 'api/types.go Options.FromMap'],
  ['"gemma2:2b" does not support chat', 400, 'refused', 'server/routes.go 2636'],
  ['invalid think value: "extreme" (must be "high", "medium", "low", "max", true, or false)', 400, 'refused', 'api/types.go 1202-1229'],
  ['top_logprobs must be between 0 and 20', 400, 'refused', 'server/routes.go'],
  ['request timeout', 408, 'outage', 'a proxy'],
];

describe('classifyServerError: what is an outage, and everything else a parser says is the model’s', () => {
  it.each(TABLE)('%s (HTTP %s) → %s [%s]', (text, status, expected) => {
    expect(classifyServerError(text, status)).toBe(expected);
  });
});

describe('overflow texts', () => {
  it.each([
    [LLAMA_OVERFLOW, { promptTokens: 9000, contextTokens: 8192 }],
    ['request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it', { promptTokens: 5000, contextTokens: 4096 }],
    ['the prompt is longer than the context length currently available to the model', {}],
  ])('%s → %o', (text, sizes) => {
    expect(overflowSizes(text)).toEqual(sizes);
  });

  it('reads the message out of llama-server’s JSON body, and leaves plain text alone', () => {
    expect(readableServerText(LLAMA_OVERFLOW)).toBe('request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it');
    expect(readableServerText('plain text')).toBe('plain text');
    expect(readableServerText('{not json')).toBe('{not json');
  });
});

describe('through the adapter, against the fake server', () => {
  /** The error a streamed call against a fake playing one scripted turn ends in. */
  async function failure(turn: FakeTurn, models?: FakeScript['models']): Promise<unknown> {
    const fake = await fakeOllama({ turns: [turn], ...(models !== undefined && { models }) });
    const stream = clientFor(fake.url).chatStream(chatRequest());
    try {
      for await (const chunk of stream) void chunk;
    } catch (err) {
      return err;
    }
    throw new Error('the call succeeded');
  }

  const XML_CALL = '<function=read_file>\n<parameter=path';
  const JSON_CALL = '{"name": "read_file", "arguments": {"path": ';
  it.each([
    ['qwen3coder', XML_CALL, /^model qwen3:8b wrote a tool call Ollama could not parse \(XML syntax error on line 2: unexpected EOF\)$/],
    ['glm46', XML_CALL, /incomplete GLM tool call: XML syntax error on line 2: unexpected EOF/],
    ['laguna', JSON_CALL, /failed to parse Laguna JSON tool call: unexpected end of JSON input/],
    ['harmony', JSON_CALL, /error parsing tool call: raw=/],
  ] as const)('a %s parser error mid-stream is a ModelOutputError (asked again)', async (parser, raw, pattern) => {
    const err = await failure({ thinking: 'calling', tool_parse_error: raw, tool_parse_error_parser: parser });
    expect(err).toBeInstanceOf(ModelOutputError);
    expect(err).toMatchObject({ code: 'malformed_tool_call' });
    expect((err as Error).message).toMatch(pattern);
  });

  it('the overflow 400 is a ContextOverflowError naming both sizes (exit 1, not 75)', async () => {
    // 10 tokens of context: the request (over 100 bytes, 4 a token) cannot fit.
    const err = await failure({ content: 'never' }, [{ name: MODEL, context_length: 10 }]);
    expect(err).toBeInstanceOf(ContextOverflowError);
    const overflow = err as ContextOverflowError;
    expect(overflow).toMatchObject({ code: 'context_overflow', exitCode: 1, contextTokens: 10 });
    expect(overflow.promptTokens).toBeGreaterThan(10);
    expect(overflow.message).toContain(`no longer fits the context window of 10 tokens`);
    expect(overflow.message).toContain(`(${overflow.promptTokens} tokens)`);
    expect(overflow.message).not.toContain('{"error"');
  });

  it.each([
    ['option "temperature" must be of type float', 400],
    ['"gemma2:2b" does not support chat', 400],
    ['top_logprobs must be between 0 and 20', 400],
  ])('%s (HTTP %i) is exit 2 with Ollama’s reason', async (message, status) => {
    const err = await failure({ http_status: status, error_message: message });
    expect(err).toBeInstanceOf(InvalidInputError);
    expect(err).toMatchObject({ code: 'ollama_rejected', exitCode: 2 });
    expect((err as Error).message).toContain(message);
  });

  it('503 "server busy" and a dropped connection are transient outages; a refused request and a malformed call are not', async () => {
    const busy = await failure({ http_status: 503, error_message: 'server busy, please try again.  maximum pending requests exceeded' });
    expect(busy).toBeInstanceOf(LlmUnavailableError);
    expect(busy).toMatchObject({ code: 'ollama_busy', exitCode: 75 });
    expect(isTransientOutage(busy)).toBe(true);
    const dropped = await failure({ content: 'partial answer', chunk_size: 4, drop_after_chunks: 2 });
    expect(isTransientOutage(dropped)).toBe(true);
    expect(isTransientOutage(await failure({ http_status: 400, error_message: 'option "num_ctx" must be of type integer' }))).toBe(false);
    expect(isTransientOutage(await failure({ tool_parse_error: '{"a":', tool_parse_error_parser: 'qwen3' }))).toBe(false);
  });
});
