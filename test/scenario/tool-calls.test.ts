/**
 * Tool calls as local models really send them (SPEC §8, §10): odd but valid arguments, several
 * calls in one turn, and bad calls that must come back to the model as results while the run
 * goes on.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import type { FakeScript } from '../support/fake-ollama.js';
import { SCENARIO_TIMEOUT_MS, describeRun, eventsOf, expectValidStream, requestMessages, resultOf, scenario } from './helpers.js';

const ODD_DIR = 'dossier été';
const ODD_FILE = `${ODD_DIR}/naïve 🚀 "q".txt`;
const ODD_CONTENT = 'Ünïcödé ✓ 日本語\nline "two" with \'quotes\' and a \\ backslash\n';
/** Quotes of both kinds, a backslash, `$`, and a newline between two commands. */
const QUOTED_COMMAND = `printf '%s|%s\\n' "it's \\"quoted\\"" 'single "inner" $HOME'\necho second line`;

const ODD_ARGUMENTS: FakeScript = {
  turns: [
    {
      tool_calls: [
        { name: 'write_file', arguments: { path: ODD_FILE, content: ODD_CONTENT } },
        // Numbers as strings, as small models often send them.
        { name: 'read_file', arguments: { path: ODD_FILE, offset: '2', limit: '1' } },
        // Empty optional fields.
        { name: 'list_dir', arguments: { path: '' } },
        { name: 'search_files', arguments: { pattern: 'quotes', path: '' } },
        { name: 'shell', arguments: { command: QUOTED_COMMAND, timeout_s: '10' } },
      ],
    },
    {
      // Several tools in one turn, each depending on the previous one.
      tool_calls: [
        { name: 'write_file', arguments: { path: 'src/app.ts', content: 'export const x = 1;\n' } },
        { name: 'read_file', arguments: { path: 'src/app.ts' } },
        { name: 'edit_file', arguments: { path: 'src/app.ts', old_string: 'const x = 1;', new_string: 'const x = 2; // “edited”' } },
        { name: 'shell', arguments: { command: 'cat src/app.ts' } },
      ],
    },
    { content: 'All done.' },
  ],
  on_exhausted: 'error',
};

/** Every kind of bad call in one turn, then an answer. */
const BAD_CALLS: FakeScript = {
  turns: [
    {
      tool_calls: [
        { name: 'frobnicate', arguments: { x: 1 } },
        { name: 'write_file', arguments: '{"path": "x.txt", "content": ' },
        { name: 'read_file', arguments: { path: 42 } },
        { name: 'read_file', arguments: { path: 'missing.txt' } },
        { name: 'read_file', arguments: { path: '../x' } },
        { name: 'read_file', arguments: { path: '/etc/passwd' } },
        { name: 'write_file', arguments: { path: '../escaped.txt', content: 'nope' } },
        { name: 'shell', arguments: { command: 'echo failing >&2; exit 3' } },
      ],
    },
    { content: 'I see what went wrong.' },
  ],
  on_exhausted: 'error',
};

forEachBackend((backend) => {
  describe('tool calls', () => {
    it('odd but valid arguments: unicode paths, quotes and newlines in shell, numbers as strings, empty optional fields; several tools per turn', async () => {
      const s = await scenario(backend, ODD_ARGUMENTS);
      const run = await s.navi(['run', '-o', 'stream-json', 'exercise the tools']);
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      const calls = eventsOf(events, 'tool_call');
      expect(calls.map((c) => [c.name, c.ok])).toEqual([
        ['write_file', true],
        ['read_file', true],
        ['list_dir', true],
        ['search_files', true],
        ['shell', true],
        ['write_file', true],
        ['read_file', true],
        ['edit_file', true],
        ['shell', true],
      ]);
      // Arguments are reported as the model sent them.
      expect(calls[1]?.arguments).toEqual({ path: ODD_FILE, offset: '2', limit: '1' });

      expect(fs.readFileSync(path.join(s.cwd, ODD_FILE), 'utf8')).toBe(ODD_CONTENT);
      expect(calls[1]?.output).toContain(`line "two" with 'quotes' and a \\ backslash`);
      expect(calls[1]?.output).not.toContain('Ünïcödé');
      expect(calls[2]?.output).toContain(ODD_DIR);
      expect(calls[3]?.output).toContain('naïve 🚀');
      expect(calls[4]?.output).toContain(`it's "quoted"|single "inner" $HOME\nsecond line\n`);
      expect(calls[4]?.output).toContain('[exit code 0]');

      expect(calls[6]?.output).toContain('export const x = 1;');
      expect(calls[8]?.output).toContain('export const x = 2; // “edited”');
      expect(fs.readFileSync(path.join(s.cwd, 'src/app.ts'), 'utf8')).toBe('export const x = 2; // “edited”\n');
      expect(resultOf(run)).toMatchObject({ status: 'success', result: 'All done.', num_turns: 3 });
    }, SCENARIO_TIMEOUT_MS);

    it('bad calls go back to the model as failed results and the run still succeeds', async () => {
      const s = await scenario(backend, BAD_CALLS);
      const run = await s.navi(['run', '-o', 'stream-json', 'try some things']);
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      const calls = eventsOf(events, 'tool_call');
      expect(calls).toHaveLength(8);
      expect(calls.every((c) => c.ok === false)).toBe(true);
      const outputs = calls.map((c) => String(c.output));
      // Each says what was wrong, in words a model can act on.
      expect(outputs[0]).toMatch(/unknown tool 'frobnicate'.*available:.*read_file/);
      expect(outputs[1]).toMatch(/invalid JSON arguments for 'write_file'/);
      expect(outputs[2]).toMatch(/invalid arguments for 'read_file': path: expected string/);
      expect(outputs[3]).toMatch(/missing\.txt: no such file/);
      expect(outputs[4]).toMatch(/refused: \.\.\/x escapes the working directory/);
      expect(outputs[5]).toMatch(/refused: absolute path \/etc\/passwd is outside the working directory/);
      expect(outputs[5]).not.toContain('root:');
      expect(outputs[6]).toMatch(/escapes the working directory/);
      expect(fs.existsSync(path.join(path.dirname(s.cwd), 'escaped.txt'))).toBe(false);
      expect(outputs[7]).toContain('failing');
      expect(outputs[7]).toContain('[exit code 3]');

      // The next request carries the calls and every one of those results, in order.
      const chats = s.chats();
      expect(chats).toHaveLength(2);
      const messages = requestMessages(chats[1]);
      const assistant = messages.find((m) => m.role === 'assistant');
      const sent = assistant?.tool_calls as Array<{ function: { name: string; arguments: unknown } }>;
      expect(sent.map((c) => c.function.name)).toEqual(BAD_CALLS.turns[0]?.tool_calls?.map((c) => c.name));
      // Ollama rejects non-object arguments: the broken JSON is replayed as an object.
      for (const c of sent) expect(typeof c.function.arguments).toBe('object');
      const toolMessages = messages.filter((m) => m.role === 'tool');
      // Iteration 2 of 40 says nothing new about the budget: the results go back as they were.
      expect(toolMessages.map((m) => m.content)).toEqual(outputs);
      expect(toolMessages.map((m) => m.tool_name)).toEqual(calls.map((c) => c.name));
      expect(resultOf(run)).toMatchObject({ status: 'success', exit_code: 0, result: 'I see what went wrong.' });
    }, SCENARIO_TIMEOUT_MS);
  });
});
