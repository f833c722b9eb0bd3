/**
 * The fast request bodies against the plain ones (issue 10, "the speed machinery behind seams").
 * navi builds each chat body on the previous request's bytes (src/llm/request-body.ts); with
 * NAVI_PLAIN_BODIES=1 it makes every body with one `JSON.stringify` of the whole request, as
 * the `ollama` npm client did (test/llm/ollama-mapping.unit.test.ts checks the two byte for byte).
 * The same conversations — a thinking tool loop, the plan tool with a sub-agent, a
 * continued session — must put the same bytes on the wire either way.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import type { FakeScript } from '../support/fake-ollama.js';
import { describeRun, LONG_SCENARIO_TIMEOUT_MS, scenario, type Scenario } from './helpers.js';

const analysis = ['TASK: Check it', 'GOAL: checked', 'UNKNOWNS: none', 'RESOURCES: a.txt', 'KNOWLEDGE RULES: none', 'COMPLEXITY: simple', 'SUBTASKS: read', 'COMMITMENTS: none'].join('\n');

const SCRIPT: FakeScript = {
  turns: [
    // Run 1: a thinking tool loop.
    { thinking: 'Read it.', tool_calls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] },
    { thinking: 'List.', tool_calls: [{ name: 'list_dir', arguments: {} }], content: 'Listing.' },
    { thinking: 'Todo.', tool_calls: [{ name: 'todo', arguments: { action: 'list' } }] },
    { content: 'a.txt says alpha.' },
    // Run 2 (same session): the plan tool and a sub-agent.
    { thinking: 'Plan first.', tool_calls: [{ name: 'plan', arguments: {} }] },
    { content: analysis },
    { content: '1. Read a.txt — TOOL: read_file\n2. Check with a helper — AGENT: researcher' },
    { thinking: 'Delegate.', tool_calls: [{ name: 'spawn_agent', arguments: { task: 'Look at a.txt and report', profile_id: 'researcher' } }] },
    { thinking: 'Sub: list.', tool_calls: [{ name: 'list_dir', arguments: {} }] },
    { content: 'a.txt is there.' },
    { content: 'All checked.' },
  ],
  on_exhausted: 'error',
};

/** Both runs of the conversation; the sha256 of every chat body, in order. */
async function conversation(s: Scenario, env: Record<string, string>): Promise<string[]> {
  s.fake.setScript(SCRIPT);
  s.fake.requests.length = 0;
  const first = await s.navi(['run', '-o', 'json', 'What does a.txt say?'], { env });
  expect(first.code, describeRun(first)).toBe(0);
  const session = String(first.events.at(-1)?.session_id);
  const second = await s.navi(['run', '-o', 'json', '-s', session, 'Check it: plan it and have a helper look'], { env });
  expect(second.code, describeRun(second)).toBe(0);
  return s.chats().map((c) => c.sha256);
}

describe('fast and plain request bodies', () => {
  assertBuilt();
  forEachBackend(
    (backend) => {
      it('the same conversation puts the same bytes on the wire either way', async () => {
        const s = await scenario(backend, SCRIPT);
        fs.writeFileSync(path.join(s.cwd, 'a.txt'), 'alpha\n');
        const fast = await conversation(s, {});
        const plain = await conversation(s, { NAVI_PLAIN_BODIES: '1' });
        expect(fast.length).toBe(SCRIPT.turns.length);
        expect(plain).toEqual(fast);
      }, LONG_SCENARIO_TIMEOUT_MS);
    },
  );
});
