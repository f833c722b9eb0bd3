/**
 * The model call as a real Ollama makes it happen (SPEC §13), through the agent with a scripted
 * model: capabilities decide `think` and whether tools can work, the model's own mistakes are
 * asked again, thinking blocks come in the order written, and a cut-off answer is never a
 * silent success.
 */
import { describe, expect, it } from 'vitest';
import { MAX_MODEL_RETRIES } from '../../src/agent/model-call.js';
import { InvalidInputError, ModelOutputError } from '../../src/errors.js';
import type { ChatChunk } from '../../src/llm/types.js';
import { Agent } from '../../src/agent/agent.js';
import { MemoryStore } from '../support/memory-store.js';
import { ScriptedLlm } from '../support/scripted-llm.js';
import { collect, options, profiles, registry, setup } from './helpers.js';

const malformed = (): ModelOutputError =>
  new ModelOutputError('malformed_tool_call', "model m wrote a tool call Ollama could not parse (error parsing tool call: raw='{\"path\": ', err=unexpected end of JSON input)");

describe('capabilities', () => {
  it('sends think only to a model that can think, and warns when the user asked for it explicitly', async () => {
    const { agent, llm } = setup([{ content: 'ok' }], undefined, { capabilities: ['completion', 'tools'] });
    const { events } = await collect(agent.runStream(options({ think: true, thinkExplicit: true })));
    expect(llm.requests[0]?.think).toBe(false);
    expect(events.find((e) => e.type === 'model_info')).toMatchObject({ capabilities: ['completion', 'tools'], think: false });
    expect(events.filter((e) => e.type === 'warning' && e.code === 'thinking_unsupported')).toHaveLength(1);
  });

  it('says nothing when thinking was only the default', async () => {
    const { agent, llm } = setup([{ content: 'ok' }], undefined, { capabilities: ['completion', 'tools'] });
    const { events } = await collect(agent.runStream(options({ think: true })));
    expect(llm.requests[0]?.think).toBe(false);
    expect(events.some((e) => e.type === 'warning')).toBe(false);
  });

  it('keeps think for a thinking model', async () => {
    const { agent, llm } = setup([{ content: 'ok' }], undefined, { capabilities: ['completion', 'tools', 'thinking'] });
    await collect(agent.runStream(options({ think: true })));
    expect(llm.requests[0]?.think).toBe(true);
  });

  it('a model without tools is exit 2 naming the model and the fix, before any chat call', async () => {
    const { agent, llm } = setup([{ content: 'never' }], undefined, { capabilities: ['completion'] });
    const error = await collect(agent.runStream(options({ model: 'gemma:2b' }))).then(
      () => null,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ code: 'model_no_tools', exitCode: 2 });
    expect((error as Error).message).toMatch(/model 'gemma:2b' cannot call tools .*capabilities as: completion.*--model or llm\.model/);
    expect(llm.requests).toHaveLength(0);
  });

  it('a profile switch to another model decides think for that model', async () => {
    const researcher = profiles.profiles.get('researcher');
    if (!researcher) throw new Error('no researcher profile');
    const small = { ...researcher, id: 'small', settings: { ...researcher.settings, model: 'llama3.1:8b' } };
    const set = { ...profiles, profiles: new Map([...profiles.profiles, ['small', small]]) };
    const llm = new ScriptedLlm([{ toolCalls: [{ name: 'switch_profile', arguments: { profile_id: 'small' } }] }, { content: 'switched' }], {
      capabilitiesByModel: { m: ['completion', 'tools', 'thinking'], 'llama3.1:8b': ['completion', 'tools'] },
    });
    const agent = new Agent({ llm, store: Promise.resolve(new MemoryStore()), tools: registry, profiles: set });
    await collect(agent.runStream(options({ think: true })));
    expect(llm.requests.map((r) => [r.model, r.think])).toEqual([
      ['m', true],
      ['llama3.1:8b', false],
    ]);
  });

  it('capabilities unknown and the server refuses thinking: the call is made again without it', async () => {
    const refusal = new InvalidInputError('model_no_thinking', "model 'm' does not support thinking");
    const { agent, llm } = setup([{ error: refusal }, { content: 'fine without' }]);
    const { events, outcome } = await collect(agent.runStream(options({ think: true, thinkExplicit: true })));
    expect(outcome).toMatchObject({ stopReason: 'completed', text: 'fine without' });
    expect(llm.requests.map((r) => r.think)).toEqual([true, false]);
    expect(events.filter((e) => e.type === 'warning' && e.code === 'thinking_unsupported')).toHaveLength(1);
  });
});

describe("the model's own mistakes", () => {
  it('a malformed tool call is asked again with a correction in the last message, not stored', async () => {
    const { agent, llm, store } = setup([
      { thinking: 'write it all at once', error: malformed() },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'x' } }] },
      { content: 'written' },
    ]);
    const { events, outcome } = await collect(agent.runStream(options()));
    expect(outcome).toMatchObject({ stopReason: 'completed', text: 'written', modelCalls: 3 });
    const warning = events.find((e) => e.type === 'warning' && e.code === 'malformed_tool_call');
    expect(warning?.type === 'warning' && warning.message).toMatch(/could not parse .*asking again \(retry 1 of 2\)/);
    // The retry is the same request plus a correction at the end…
    const [first, retry] = llm.requests;
    expect(retry?.messages.slice(0, -1)).toEqual(first?.messages);
    expect(retry?.messages.at(-1)?.content).toMatch(/could not be parsed .*valid JSON object/s);
    expect(retry?.messages.filter((m) => m.role === 'system')).toHaveLength(1);
    // …and the failed attempt is neither stored nor sent back.
    // (The task and the first call's budget note, then the call, its result, the answer.)
    expect(store.display.get('s1')?.map((m) => m.role)).toEqual(['user', 'user', 'assistant', 'tool', 'assistant']);
    expect(JSON.stringify(llm.requests[2]?.messages)).not.toContain('write it all at once');
  });

  it('an empty reply after thinking (a swallowed call) is asked again', async () => {
    const { agent, llm } = setup([{ thinking: 'I will call read_file' }, { content: 'here it is' }]);
    const { events, outcome } = await collect(agent.runStream(options()));
    expect(outcome).toMatchObject({ stopReason: 'completed', text: 'here it is' });
    expect(events.find((e) => e.type === 'warning' && e.code === 'empty_reply')).toBeDefined();
    expect(llm.requests[1]?.messages.at(-1)?.content).toContain('neither an answer nor a tool call');
  });

  it(`gives up after ${MAX_MODEL_RETRIES} retries: stop reason model_error with the detail, no crash`, async () => {
    const { agent, llm } = setup(Array.from({ length: 5 }, () => ({ error: malformed() })));
    const { events, outcome } = await collect(agent.runStream(options()));
    expect(llm.requests).toHaveLength(MAX_MODEL_RETRIES + 1);
    expect(outcome.stopReason).toBe('model_error');
    expect(outcome.error).toMatch(/could not parse .*3 times in a row/);
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', stop_reason: 'model_error' });
    expect(events.some((e) => e.type === 'error' && e.code === 'malformed_tool_call')).toBe(true);
  });

  it('a transport failure is not retried', async () => {
    const { LlmUnavailableError } = await import('../../src/errors.js');
    const { agent, llm } = setup([{ error: new LlmUnavailableError('ollama_unreachable', 'cannot reach Ollama') }, { content: 'never' }]);
    await expect(collect(agent.runStream(options()))).rejects.toMatchObject({ code: 'ollama_unreachable' });
    expect(llm.requests).toHaveLength(1);
  });
});

describe('chunk shapes', () => {
  const chunks = (...cs: ChatChunk[]): ChatChunk[] => cs;

  it('thinking after content starts a new thinking block; events keep the order written', async () => {
    const { agent } = setup([
      {
        chunks: chunks(
          { type: 'thinking', text: 'first ' },
          { type: 'thinking', text: 'idea' },
          { type: 'text', text: 'Let me check. ' },
          { type: 'thinking', text: 'second' },
          { type: 'text', text: 'Done.' },
        ),
      },
    ]);
    const { events, outcome } = await collect(agent.runStream(options()));
    const seq = events
      .filter((e) => ['thinking_delta', 'thinking_end', 'text_delta'].includes(e.type))
      .map((e) => (e.type === 'thinking_end' ? `end:${e.chars}` : e.type === 'thinking_delta' ? `think:${e.text}` : `text:${e.type === 'text_delta' ? e.text : ''}`));
    expect(seq).toEqual(['think:first ', 'think:idea', 'end:10', 'text:Let me check. ', 'think:second', 'end:6', 'text:Done.']);
    expect(outcome.text).toBe('Let me check. Done.');
  });

  it('calls split over chunks are all run, in order', async () => {
    const { agent, llm } = setup([
      {
        chunks: chunks(
          { type: 'tool_calls', calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }] },
          { type: 'tool_calls', calls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] },
        ),
      },
      { content: 'ok' },
    ]);
    const { events } = await collect(agent.runStream(options()));
    expect(events.filter((e) => e.type === 'tool_call').map((e) => (e.type === 'tool_call' ? [e.name, e.ok] : []))).toEqual([
      ['write_file', true],
      ['read_file', true],
    ]);
    expect(llm.requests[1]?.messages.at(-1)?.content).toMatch(/^a/);
  });

  it('done_reason "length" without calls: a warning and stop reason truncated, never a clean completion', async () => {
    const { agent } = setup([{ content: 'The answer is', doneReason: 'length' }]);
    const { events, outcome } = await collect(agent.runStream(options()));
    expect(outcome).toMatchObject({ stopReason: 'truncated', text: 'The answer is' });
    expect(outcome.error).toContain('cut off');
    expect(events.find((e) => e.type === 'warning' && e.code === 'reply_truncated')).toBeDefined();
  });

  it('done_reason "length" with complete calls: a warning, and the calls run', async () => {
    const { agent } = setup([{ toolCalls: [{ name: 'list_dir', arguments: {} }], doneReason: 'length' }, { content: 'listed' }]);
    const { events, outcome } = await collect(agent.runStream(options()));
    expect(outcome).toMatchObject({ stopReason: 'completed', text: 'listed' });
    expect(events.find((e) => e.type === 'warning' && e.code === 'reply_truncated')).toBeDefined();
    expect(events.some((e) => e.type === 'tool_call' && e.name === 'list_dir')).toBe(true);
  });
});
