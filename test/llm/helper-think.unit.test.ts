/**
 * The `think` of helper calls (planner, summariser, memory extraction): false, except on models
 * that cannot turn reasoning off (gpt-oss / harmony: server/routes.go 77-87 shouldUseHarmony,
 * docs/capabilities/thinking.mdx), where false is ignored and "low" is the cheapest effort.
 */
import { describe, expect, it } from 'vitest';
import { cannotDisableThinking, helperThink, helperThinkValue } from '../../src/llm/helper-think.js';
import type { ModelDetails } from '../../src/llm/types.js';
import { ScriptedLlm } from '../support/scripted-llm.js';

describe('helperThinkValue', () => {
  it.each<[string, ModelDetails | null | undefined, false | 'low']>([
    ['no details (show failed)', null, false],
    ['qwen3', { name: 'qwen3:8b', family: 'qwen3', capabilities: ['completion', 'tools', 'thinking'] }, false],
    ['gpt-oss (family gptoss)', { name: 'gpt-oss:20b', family: 'gptoss', capabilities: ['completion', 'tools', 'thinking'] }, 'low'],
    ['gpt-oss spelt gpt-oss', { name: 'x', family: 'gpt-oss' }, 'low'],
    ['family in capitals', { name: 'x', family: 'GPTOSS' }, 'low'],
    ['a model with the harmony parser', { name: 'my-finetune', family: 'llama', parser: 'harmony', capabilities: ['completion', 'thinking'] }, 'low'],
    ['gpt-oss without thinking reported: a level would be a 400', { name: 'x', family: 'gptoss', capabilities: ['completion', 'tools'] }, false],
    ['another parser', { name: 'qwen3-coder', family: 'qwen3moe', parser: 'qwen3-coder' }, false],
    ['no family reported (older server)', { name: 'gpt-oss:20b' }, false],
  ])('%s', (_name, details, want) => {
    expect(helperThinkValue(details)).toBe(want);
    expect(cannotDisableThinking(details)).toBe(want === 'low');
  });

  it('helperThink asks /api/show and sends false when it fails', async () => {
    const llm = new ScriptedLlm([]);
    expect(await helperThink(llm, 'scripted')).toBe(false);
    const failing = Object.assign(new ScriptedLlm([]), { showModel: () => Promise.reject(new Error('down')) });
    expect(await helperThink(failing, 'x')).toBe(false);
  });
});
