/**
 * Issue 17 point 5: with a small model (8k context, common for local models) the first
 * compression summarised the user's task itself and the run went on without it. The message
 * that started the turn is never compressed: after every compression, the task is still in the
 * request, verbatim.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import type { FakeScript } from '../support/fake-ollama.js';
import { describeRun, LONG_SCENARIO_TIMEOUT_MS, scenario } from './helpers.js';

const MODEL = { name: 'small:8k', context_length: 8192, capabilities: ['completion', 'tools'] };
const TASK = 'TASK-7Q: read part1.txt to part8.txt and report which part mentions the blue key.';

/**
 * Every reply is both a summary (the summariser reads `content`) and a tool call (the agent reads
 * both): where the compressions fall depends on sizes, not on the script's order.
 */
const SCRIPT: FakeScript = {
  models: [MODEL],
  turns: Array.from({ length: 8 }, (_, i) => ({ content: `Summary: read parts 1 to ${i}.`, tool_calls: [{ name: 'read_file', arguments: { path: `part${i + 1}.txt` } }] })),
  on_exhausted: 'done',
};

type Message = { role: string; content: string };

describe('the task of the turn survives compression (issue 17 point 5)', () => {
  assertBuilt();
  forEachBackend(
    (backend) => {
      it('an 8k model compresses mid-turn and every later request still carries the task verbatim', async () => {
        const s = await scenario(backend, SCRIPT);
        for (let i = 1; i <= 8; i++) fs.writeFileSync(path.join(s.cwd, `part${i}.txt`), `part ${i}: ${'lorem ipsum dolor sit amet '.repeat(110)}\n`);
        const run = await s.navi(['run', '-o', 'stream-json', '--model', MODEL.name, '--max-iterations', '12', TASK]);
        expect(run.code, describeRun(run)).toBe(0);
        expect(run.events.some((e) => e.type === 'context_compressed'), describeRun(run)).toBe(true);
        // The agent's requests (the summariser's has no tools) after the first compression.
        const agentRequests = s.chats().filter((c) => Array.isArray(c.body?.tools));
        const compressed = agentRequests.filter((c) => ((c.body?.messages ?? []) as Message[]).some((m) => m.content.startsWith('[Summary of the earlier conversation')));
        expect(compressed.length).toBeGreaterThan(0);
        for (const c of compressed) {
          const messages = (c.body?.messages ?? []) as Message[];
          expect(messages.filter((m) => m.role === 'user' && m.content === TASK)).toHaveLength(1);
        }
      }, LONG_SCENARIO_TIMEOUT_MS);
    },
  );
});
