/** Shared set-up for the agent-core unit tests: a scripted model, an in-memory store, the real tools. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, type TurnOptions, type TurnOutcome } from '../../src/agent/agent.js';
import { agentTools } from '../../src/agent/agent-tools.js';
import type { AgentEvent } from '../../src/agent/events.js';
import { loadProfiles } from '../../src/profiles/load.js';
import { builtinTools } from '../../src/tools/builtin/index.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { MemoryStore } from '../support/memory-store.js';
import { ScriptedLlm, type ScriptedLlmOptions, type ScriptedTurn } from '../support/scripted-llm.js';

export const profiles = loadProfiles();
export const registry = new ToolRegistry([...builtinTools(), ...agentTools()]);

export function setup(turns: ScriptedTurn[], store = new MemoryStore(), llmOptions: ScriptedLlmOptions = {}): { llm: ScriptedLlm; store: MemoryStore; agent: Agent } {
  const llm = new ScriptedLlm(turns, llmOptions);
  const agent = new Agent({ llm, store: Promise.resolve(store), tools: registry, profiles });
  return { llm, store, agent };
}

export function options(over: Partial<TurnOptions> = {}): TurnOptions {
  return {
    sessionId: 's1',
    newSession: true,
    message: 'do the thing',
    profileId: 'default',
    model: 'm',
    cwd: mkdtempSync(join(tmpdir(), 'navi-agent-')),
    numCtx: 8192,
    think: true,
    keepAlive: '30m',
    signal: new AbortController().signal,
    interactive: false,
    shell: { allow: [], deny: [], timeoutS: 10, maxOutputBytes: 65536 },
    redact: (s) => s,
    ...over,
  };
}

export async function collect(gen: AsyncGenerator<AgentEvent, TurnOutcome>): Promise<{ events: AgentEvent[]; outcome: TurnOutcome }> {
  const events: AgentEvent[] = [];
  for (;;) {
    const step = await gen.next();
    if (step.done) return { events, outcome: step.value };
    events.push(step.value);
  }
}
