/**
 * The answer on stdout in text mode is made of segments — one per model reply (before a tool
 * call, in the next tool-loop or loop iteration). Each ends its line and the next starts a
 * paragraph of its own: "…first.All good." was printed glued together (issue 11, bug 1).
 */
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import { Output, answerOnly, repeatsResume } from '../../src/cli/output.js';

/** Text mode writing to strings; `tty`: stdout is a terminal (the answer streams), else captured. */
function textOutput(tty = true): { out: Output; stdout: () => string } {
  let stdout = '';
  const stream = (append: (s: string) => void, isTTY: boolean): NodeJS.WriteStream =>
    ({ isTTY, write: (s: string, cb?: () => void) => (append(s), cb?.(), true) }) as unknown as NodeJS.WriteStream;
  const out = new Output({ mode: 'text', quiet: false, color: false, stdout: stream((s) => (stdout += s), tty), stderr: stream(() => undefined, false), env: {} });
  return { out, stdout: () => stdout };
}

const usage = { prompt_tokens: 1, completion_tokens: 1 };

describe('Output: answer segments (stdout a terminal)', () => {
  it('ends the first reply’s line before its tool and starts the next reply on a paragraph of its own', () => {
    const { out, stdout } = textOutput();
    const events: AgentEvent[] = [
      { type: 'text_delta', text: 'Let me ', iteration: 1 },
      { type: 'text_delta', text: 'check first.', iteration: 1 },
      { type: 'tool_started', call_id: 'c1', name: 'list_dir', arguments: {}, iteration: 1 },
      { type: 'tool_call', call_id: 'c1', name: 'list_dir', arguments: {}, ok: true, duration_ms: 3, output: '', truncated: false, iteration: 1 },
      { type: 'text_delta', text: 'All good.', iteration: 2 },
      { type: 'stream_end', stop_reason: 'completed', text: 'All good.', iterations: 2, usage },
    ];
    for (const ev of events) out.event(ev);
    expect(stdout()).toBe('Let me check first.\n\nAll good.\n');
  });

  it('separates replies of consecutive iterations even without a tool event between them', () => {
    const { out, stdout } = textOutput();
    out.event({ type: 'text_delta', text: 'One.', iteration: 1 });
    out.event({ type: 'text_delta', text: 'Two.', iteration: 2 });
    out.event({ type: 'stream_end', stop_reason: 'completed', text: 'Two.', iterations: 2, usage });
    expect(stdout()).toBe('One.\n\nTwo.\n');
  });

  it('keeps one reply whole however it is split, and adds nothing to a reply that ends its line', () => {
    const { out, stdout } = textOutput();
    for (const piece of ['A line', ' of text.\n', 'Another.\n']) out.event({ type: 'text_delta', text: piece, iteration: 1 });
    out.event({ type: 'stream_end', stop_reason: 'completed', text: '', iterations: 1, usage });
    expect(stdout()).toBe('A line of text.\nAnother.\n');
  });
});

describe('Output: stdout captured (issue 18, item 14)', () => {
  it('is the final answer alone: no words before a tool call, no sub-agent answer', () => {
    const { out, stdout } = textOutput(false);
    const events: AgentEvent[] = [
      { type: 'text_delta', text: 'Let me check first.', iteration: 1 },
      { type: 'tool_started', call_id: 'c1', name: 'spawn_agent', arguments: {}, iteration: 1 },
      { type: 'text_delta', text: 'SUB-AGENT answer', iteration: 1, is_subagent: true, agent_path: ['researcher'] },
      { type: 'stream_end', stop_reason: 'completed', text: 'SUB-AGENT answer', iterations: 1, usage, is_subagent: true, agent_path: ['researcher'] },
      { type: 'tool_call', call_id: 'c1', name: 'spawn_agent', arguments: {}, ok: true, duration_ms: 3, output: '', truncated: false, iteration: 1 },
      { type: 'text_delta', text: 'All ', iteration: 2 },
      { type: 'text_delta', text: 'good.', iteration: 2 },
      { type: 'stream_end', stop_reason: 'completed', text: 'All good.', iterations: 2, usage },
    ];
    for (const ev of events) out.event(ev);
    expect(stdout()).toBe('All good.\n');
  });

  it.each([
    [{ isTTY: true }, false],
    [{ isTTY: false }, true],
    [{}, true],
  ])('answerOnly(%j) → %s', (stream, want) => {
    expect(answerOnly(stream)).toBe(want);
  });
});

describe('repeatsResume', () => {
  it.each<[string, string | null, boolean]>([
    ['resume with: navi loop --resume run_1', 'navi loop --resume run_1', true],
    ['resume with: navi loop --resume run_1', 'navi loop --resume run_1 --max-tokens N', true],
    ['resume with: navi loop --resume run_1 --extend 3', 'navi loop --resume run_1 --extend 3', true],
    ['resume with: navi loop --resume run_1', null, false],
    ['resume with: navi loop --resume run_2', 'navi loop --resume run_1', false],
    ['interrupted; the run is saved', 'navi loop --resume run_1', false],
  ])('%j after the block showed %j → %s', (error, shown, want) => {
    expect(repeatsResume(error, shown)).toBe(want);
  });
});
