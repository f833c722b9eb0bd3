/**
 * Shared pieces of the LLM adapter tests: the real adapter pointed at a fake server, a default
 * request, and small collectors. Nothing here mocks a module.
 */
import { expect } from 'vitest';
import { LlmUnavailableError } from '../../src/errors.js';
import { createOllamaClient } from '../../src/llm/ollama-client.js';
import type { ChatChunk, ChatRequest, LlmClient, LlmClientOptions } from '../../src/llm/types.js';

/** The model the fake serves by default. */
export const MODEL = 'qwen3:8b';

/** The real adapter with generous timeouts unless a test narrows them. */
export function clientFor(host: string, overrides: Partial<LlmClientOptions> = {}): LlmClient {
  return createOllamaClient({ host, firstChunkTimeoutS: 10, chunkTimeoutS: 10, ...overrides });
}

/** A small request; `signal` defaults to one that never fires. */
export function chatRequest(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: MODEL,
    messages: [{ role: 'user', content: 'hello' }],
    think: true,
    numCtx: 8192,
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** Reads the whole stream. */
export async function collect(stream: AsyncIterable<ChatChunk>): Promise<ChatChunk[]> {
  const chunks: ChatChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

/** Reads the stream and returns the chunks seen and the error it ended with (if any). */
export async function collectUntilError(
  stream: AsyncIterable<ChatChunk>,
): Promise<{ chunks: ChatChunk[]; error: unknown }> {
  const chunks: ChatChunk[] = [];
  try {
    for await (const chunk of stream) chunks.push(chunk);
  } catch (error) {
    return { chunks, error };
  }
  return { chunks, error: undefined };
}

/** The rejection of `work`; fails the test if it resolves. */
export async function rejectionOf(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** Concatenated text of the chunks of one kind. */
export function textOf(chunks: ChatChunk[], type: 'text' | 'thinking'): string {
  return chunks.map((c) => (c.type === type ? c.text : '')).join('');
}

/** The adapter's failures: an LlmUnavailableError with this code, exit 75, one line. */
export function expectLlmError(error: unknown, code: string): LlmUnavailableError {
  expect(error).toBeInstanceOf(LlmUnavailableError);
  const llmError = error as LlmUnavailableError;
  expect(llmError.code).toBe(code);
  expect(llmError.exitCode).toBe(75);
  expect(llmError.message).not.toContain('\n');
  return llmError;
}
