/**
 * Profiles choose the tools, also through `spawn_agent` and `switch_profile` (the tool ceiling):
 * the shipped read-only `researcher` starts a `default` sub-agent, which then tries the shell and
 * a write. The sub-agent is offered neither, both calls come back as `unknown tool`, nothing is
 * created, and the run says which tools were dropped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { SCENARIO_TIMEOUT_MS, describeRun, eventsOf, expectValidStream, scenario } from '../scenario/helpers.js';

const WIDENING = ['shell', 'write_file', 'edit_file'];

const toolNames = (body: Record<string, unknown> | undefined): string[] =>
  Array.isArray(body?.tools) ? (body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name) : [];

forEachBackend((backend) => {
  describe('profile tool ceiling', () => {
    it('researcher → spawn_agent default: no shell, no writes, a tools_dropped warning', async () => {
      const s = await scenario(backend, {
        turns: [
          { tool_calls: [{ name: 'spawn_agent', arguments: { task: 'make a file', profile_id: 'default' } }] },
          {
            tool_calls: [
              { name: 'shell', arguments: { command: 'touch PWNED_BY_SHELL' } },
              { name: 'write_file', arguments: { path: 'PWNED_BY_WRITE', content: 'x' } },
            ],
          },
          { content: 'I could not.' },
          { content: 'The sub-agent could not write.' },
        ],
        on_exhausted: 'error',
      });
      const run = await s.navi(['run', '--profile', 'researcher', '-o', 'stream-json', 'escalate']);
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      for (const f of ['PWNED_BY_SHELL', 'PWNED_BY_WRITE']) expect(fs.existsSync(path.join(s.cwd, f)), f).toBe(false);
      const chats = s.chats();
      expect(chats).toHaveLength(4);
      for (const chat of chats) for (const t of WIDENING) expect(toolNames(chat.body)).not.toContain(t);
      const sub = eventsOf(events, 'tool_call').filter((e) => e.is_subagent === true);
      expect(sub.map((e) => [e.name, e.ok])).toEqual([['shell', false], ['write_file', false]]);
      const spawn = eventsOf(events, 'tool_call').find((e) => e.name === 'spawn_agent');
      expect(String(spawn?.output)).toMatch(/^\[sub-agent 'default' ran without write_file, edit_file, shell: /);
      expect(eventsOf(events, 'warning').filter((w) => w.code === 'tools_dropped')).toHaveLength(1);
    }, SCENARIO_TIMEOUT_MS);
  });
});
