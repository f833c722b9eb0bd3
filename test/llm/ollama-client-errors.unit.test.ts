import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LlmUnavailableError } from '../../src/errors.js';
import { InvalidInputError, ModelOutputError } from '../../src/errors.js';
import { fakeOllama } from '../support/fake-ollama-harness.js';
import type { FakeOllama, FakeTurn } from '../support/fake-ollama.js';
import { closedPort } from '../support/ports.js';
import { chatRequest, clientFor, collectUntilError, expectLlmError, MODEL, rejectionOf, textOf } from './llm-test-helpers.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** Runs one streamed call against a single scripted turn and returns what it produced. */
async function streamTurn(turn: FakeTurn): Promise<{ server: FakeOllama; text: string; error: unknown }> {
  const server = await fakeOllama({ turns: [turn] });
  const { chunks, error } = await collectUntilError(clientFor(server.url).chatStream(chatRequest()));
  return { server, text: textOf(chunks, 'text'), error };
}

describe('unreachable server', () => {
  it('says connection refused, the host, and what to do', async () => {
    const port = await closedPort();
    const host = `http://127.0.0.1:${port}`;
    const { error } = await collectUntilError(clientFor(host).chatStream(chatRequest()));
    const llmError = expectLlmError(error, 'ollama_unreachable');
    expect(llmError.message).toBe(
      `cannot reach Ollama at ${host} (ECONNREFUSED); is \`ollama serve\` running? set --ollama-host or OLLAMA_HOST`,
    );
  });

  it('maps metadata calls the same way', async () => {
    const host = `127.0.0.1:${await closedPort()}`;
    const error = await rejectionOf(clientFor(host).version());
    expect(expectLlmError(error, 'ollama_unreachable').message).toContain(`http://${host} (ECONNREFUSED)`);
  });

  it('treats a host that is not a URL as invalid input', async () => {
    const error = await rejectionOf(clientFor('http://[not a host').listModels());
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).code).toBe('ollama_host_invalid');
  });
});

describe('server errors', () => {
  it('404 for a model that is not pulled names the model and the pull command', async () => {
    const server = await fakeOllama({ turns: [{ content: 'unused' }] });
    const { error } = await collectUntilError(
      clientFor(server.url).chatStream(chatRequest({ model: 'llama9:1b' })),
    );
    // Retrying cannot bring the model: invalid input (exit 2), not "retry later" (75).
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).exitCode).toBe(2);
    expect((error as InvalidInputError).code).toBe('model_not_found');
    expect((error as InvalidInputError).message).toBe(
      `model 'llama9:1b' is not pulled on ${server.url}; run: ollama pull llama9:1b (or choose another with --model or llm.model)`,
    );
    expect(server.turnsServed).toBe(0);
  });

  it('a scripted 404 turn maps the same way', async () => {
    const { error } = await streamTurn({ http_status: 404 });
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).message).toContain(`run: ollama pull ${MODEL}`);
  });

  it('an error line mid-stream ends the call with the server message, after the chunks before it', async () => {
    const { text, error } = await streamTurn({
      content: 'partial answer here',
      chunk_size: 7,
      error_line: 'an error was encountered while running the model: CUDA out of memory',
      error_after_chunks: 2,
    });
    expect(text).toBe('partial answer');
    const llmError = expectLlmError(error, 'runner_failed');
    expect(llmError.message).toContain('CUDA out of memory');
    expect(llmError.message).toContain(MODEL);
  });

  // llm/llama_server.go 1690-1703: the repeat-token abort closes the 200 body cleanly, no done.
  it('a stream that ends cleanly without done is the model looping (asked again), not an outage', async () => {
    const { text, error } = await streamTurn({ content: 'cut off', no_done: true });
    expect(text).toBe('cut off');
    expect(error).toBeInstanceOf(ModelOutputError);
    expect(error).toMatchObject({ code: 'reply_cut_off', exitCode: 1 });
    expect((error as Error).message).toContain(MODEL);
  });

  it('a dropped connection mid-stream is incomplete', async () => {
    const { error } = await streamTurn({ content: 'abcdefghijklmnop', chunk_size: 4, drop_after_chunks: 2 });
    expectLlmError(error, 'stream_incomplete');
  });

  it('garbage lines are an Ollama error, not silently skipped', async () => {
    const { text, error } = await streamTurn({ content: 'before and after', garbage: true });
    expect(text).toBe('before a');
    expect(expectLlmError(error, 'ollama_error').message).toContain('not JSON');
  });

  it('a 500 carries the server message', async () => {
    const { server, error } = await streamTurn({ http_status: 500, error_message: 'llama runner process has terminated' });
    expect(expectLlmError(error, 'runner_failed').message).toBe(
      `Ollama at ${server.url} returned HTTP 500 for model ${MODEL}: llama runner process has terminated`,
    );
  });

  // Capability refusals cannot be cured by retrying later: exit 2 with the fix, not 75.
  it('a model without thinking support gets the llm.think hint (exit 2)', async () => {
    const { error } = await streamTurn({ http_status: 400, error_message: `"${MODEL}" does not support thinking` });
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ code: 'model_no_thinking', exitCode: 2 });
    expect((error as Error).message).toContain('set llm.think: false');
  });

  it('a model without tool support names the model and the fix (exit 2)', async () => {
    const { error } = await streamTurn({ http_status: 400, error_message: `registry.ollama.ai/library/${MODEL} does not support tools` });
    expect(error).toMatchObject({ code: 'model_no_tools', exitCode: 2 });
    expect((error as Error).message).toMatch(/model 'qwen3:8b' cannot call tools .*--model or llm\.model/);
  });

  it.each([
    ['as the last line of a 200 stream', { content: 'Writing', error_line: "error parsing tool call: raw='{\"path\": \"a.txt\", \"content\": \"unterminated', err=unexpected end of JSON input" }],
    ['as an HTTP 500 before any line', { http_status: 500, error_message: "error parsing tool call: raw='{bad', err=invalid character 'b'" }],
  ])('a tool call Ollama could not parse is the model\'s mistake, not an outage (%s)', async (_how, turn) => {
    const { error } = await streamTurn(turn);
    expect(error).toBeInstanceOf(ModelOutputError);
    expect(error).toMatchObject({ code: 'malformed_tool_call', exitCode: 1 });
    expect((error as Error).message).toMatch(/^model qwen3:8b wrote a tool call Ollama could not parse \(error parsing tool call: raw=/);
  });

  it('a proxy error page (non-JSON body) becomes a one-line error', async () => {
    const { error } = await streamTurn({
      http_status: 502,
      error_body_text: '<html>\n<head><title>502 Bad Gateway</title></head>\n<body>nginx</body>\n</html>',
    });
    const llmError = expectLlmError(error, 'ollama_error');
    expect(llmError.message).toContain('HTTP 502');
    expect(llmError.message).toContain('<html>');
  });

  // A 500 whose text names no server failure is what a parser sends before any line: the model's.
  it('a script that runs out answers 500, which reads as the model\'s mistake (asked again, bounded)', async () => {
    const server = await fakeOllama({ turns: [], on_exhausted: 'error' });
    const error = await rejectionOf(clientFor(server.url).chat(chatRequest()));
    expect(error).toBeInstanceOf(ModelOutputError);
    expect((error as Error).message).toContain('script exhausted');
  });
});

describe('nothing reaches stdout on error paths', () => {
  it('the adapter prints nothing for any failure', async () => {
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const consoleSpies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((method) =>
      vi.spyOn(console, method).mockImplementation(() => undefined),
    );
    const turns: FakeTurn[] = [
      { http_status: 502, error_body_text: '<html>bad gateway</html>' },
      { http_status: 503, error_body_text: '' },
      { http_status: 500 },
      { http_status: 404 },
      { content: 'x', garbage: true },
      { content: 'y', error_line: 'boom' },
      { content: 'z', no_done: true },
      { content: 'abcdefgh', chunk_size: 2, drop_after_chunks: 1 },
    ];
    const server = await fakeOllama({ turns });
    const llm = clientFor(server.url);
    const codes: string[] = [];
    for (let i = 0; i < turns.length; i++) {
      const error = await rejectionOf(llm.chat(chatRequest()));
      codes.push((error as LlmUnavailableError).code);
    }
    codes.push(((await rejectionOf(llm.showModel('missing:1b'))) as LlmUnavailableError).code);
    codes.push(
      ((await rejectionOf(clientFor(`http://127.0.0.1:${await closedPort()}`).chat(chatRequest()))) as LlmUnavailableError)
        .code,
    );

    expect(codes).toEqual([
      'ollama_error',
      'ollama_busy',
      'runner_failed',
      'model_not_found',
      'ollama_error',
      'malformed_tool_call',
      'reply_cut_off',
      'stream_incomplete',
      'model_not_found',
      'ollama_unreachable',
    ]);
    expect(stdout).not.toHaveBeenCalled();
    for (const spy of consoleSpies) expect(spy).not.toHaveBeenCalled();
  });
});
