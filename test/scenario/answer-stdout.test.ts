/**
 * Text mode's stdout is the answer (issue 18, item 14): `answer=$(navi run …)` gets exactly what
 * `-o json` reports as `.result` and a newline — not the words the model wrote before its tool
 * calls, nor a sub-agent's answer (the parent's tool result), as with `claude -p`.
 */
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import type { FakeScript } from '../support/fake-ollama.js';
import { SCENARIO_TIMEOUT_MS, describeRun, scenario, writeFiles } from './helpers.js';

const FINAL = 'The notes say hello; todo.md has 2 items.';

/** Words before each tool call, a sub-agent that answers, then the final answer. */
const TURNS: FakeScript['turns'] = [
  { content: 'Let me read the notes first.', tool_calls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
  { content: 'Now I will ask a helper about the todo list.', tool_calls: [{ name: 'spawn_agent', arguments: { task: 'Read todo.md and say how many items it has.', profile_id: 'researcher' } }] },
  { tool_calls: [{ name: 'read_file', arguments: { path: 'todo.md' } }] },
  { content: 'SUB-AGENT: todo.md has 2 items.' },
  { content: FINAL },
];

forEachBackend((backend) => {
  describe('text stdout is the result', () => {
    it('text stdout equals -o json .result: no intermediate or sub-agent text', async () => {
      const s = await scenario(backend, { turns: [...TURNS, ...TURNS], on_exhausted: 'error' });
      writeFiles(s.cwd, { 'notes.txt': 'hello\n', 'todo.md': '- a\n- b\n' });
      const text = await s.navi(['run', 'what do the notes and the todo list say?'], { ci: false });
      expect(text.code, describeRun(text)).toBe(0);
      const json = await s.navi(['run', '-o', 'json', 'what do the notes and the todo list say?']);
      expect(json.code, describeRun(json)).toBe(0);
      const result = (JSON.parse(json.stdout) as { result: string }).result;
      expect(result).toBe(FINAL);
      expect(text.stdout).toBe(`${result}\n`);
      // Not a terminal: the intermediate words go nowhere, stderr stays clean.
      expect(text.stderr).toBe('');
    }, SCENARIO_TIMEOUT_MS);

  });
});
