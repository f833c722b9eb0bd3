/**
 * Issue 17 point 7: the history is append-only within a run. llama-server reuses only the
 * longest common token prefix, and SWA/hybrid models resume only from checkpoints near the
 * previous prompt's end, so a note appended to a copy of the last tool result and dropped on the
 * next call (iteration budget, goal anchor, anti-stall) costs a re-prefill on every call. A note
 * once sent stays where it was, in the context and in the stored context; the budget note is sent
 * when it says something new.
 */
import { describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import type { FakeScript } from '../support/fake-ollama.js';
import { describeRun, LONG_SCENARIO_TIMEOUT_MS, scenario } from './helpers.js';

/** Seven tool calls, then the answer: eight model calls, the last at the iteration limit. */
const SCRIPT: FakeScript = {
  turns: [
    ...Array.from({ length: 7 }, () => ({ tool_calls: [{ name: 'list_dir', arguments: {} }] })),
    { content: 'Nothing there.' },
  ],
  on_exhausted: 'error',
};

type Message = { role: string; content: string };

function messagesOf(body: Record<string, unknown> | undefined): Message[] {
  return (body?.messages ?? []) as Message[];
}

describe('append-only history (issue 17 point 7)', () => {
  assertBuilt();
  forEachBackend((backend) => {
    it("request N's messages are a prefix of request N+1's, notes included, and a continued session sends them again", async () => {
      const s = await scenario(backend, SCRIPT);
      const run = await s.navi(['run', '-o', 'json', '--max-iterations', '8', 'What is in this directory?']);
      expect(run.code, describeRun(run)).toBe(0);
      const requests = s.chats().map((c) => messagesOf(c.body));
      expect(requests).toHaveLength(8);
      for (let n = 1; n < requests.length; n++) {
        const before = requests[n - 1] ?? [];
        // Element for element: nothing once sent changed or vanished.
        expect(requests[n]?.slice(0, before.length), `request ${n + 1} against request ${n}`).toEqual(before);
      }
      const last = requests.at(-1) ?? [];
      const text = last.map((m) => m.content).join('\n');
      // The notes were sent and stayed: the budget at 1, half-way (4 left), 3 left and the last
      // iteration, and the goal anchor at iteration 6 (every 5).
      expect(text).toContain('Iteration 1 of 8: 7 left');
      expect(text).toContain('Iteration 4 of 8: 4 left');
      expect(text).toContain('Iteration 5 of 8: 3 left');
      expect(text).toContain('Last iteration (8 of 8)');
      expect(text).toContain('Goal reminder');
      // Not on every call: iterations 2, 3, 6 and 7 say nothing new about the budget.
      for (const i of [2, 3, 6, 7]) expect(text).not.toContain(`Iteration ${i} of 8`);

      // The stored context holds the notes too: the continued session's request starts with
      // the whole last request of the first run, element for element.
      const session = String(run.events.at(-1)?.session_id);
      s.fake.setScript({ turns: [{ content: 'Still nothing.' }], on_exhausted: 'error' });
      s.fake.requests.length = 0;
      const again = await s.navi(['run', '-o', 'json', '-s', session, 'And now?']);
      expect(again.code, describeRun(again)).toBe(0);
      const resumed = messagesOf(s.chats()[0]?.body);
      expect(resumed.slice(0, last.length)).toEqual(last);
    }, LONG_SCENARIO_TIMEOUT_MS);
  });
});
