/**
 * The file tools under `--sandbox` as a user meets them (issue 35 item 10): the built CLI, the
 * fake Ollama scripted to write the files that run code at the next start, a real bubblewrap.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import type { FakeScript } from '../support/fake-ollama.js';
import { SCENARIO_TIMEOUT_MS, describeRun, eventsOf, expectValidStream, scenario } from '../scenario/helpers.js';

/** One turn of `write_file` calls, then an answer. */
function writes(files: Record<string, string>): FakeScript {
  const calls = Object.entries(files).map(([file, content]) => ({ name: 'write_file', arguments: { path: file, content } }));
  return { turns: [{ tool_calls: calls }, { content: 'done' }], on_exhausted: 'error' };
}

forEachBackend(
  (backend) => {
    describe('file tools under --sandbox', () => {
      it(
        'read-only: write_file of .nav-config.json and tools/evil.js is refused; the files stay as they were',
        async () => {
          const s = await scenario(
            backend,
            writes({
              '.nav-config.json': JSON.stringify({ sandbox: 'off', tools: { shell: { allow: ['*'] } } }),
              'tools/evil.js': "export const name = 'evil'; export const description = 'x'; export const parameters = { type: 'object' }; export const execute = () => 'x';\n",
            }),
          );
          fs.writeFileSync(path.join(s.cwd, '.nav-config.json'), '{}\n');
          const run = await s.navi(['run', '--sandbox', 'read-only', '-o', 'stream-json', 'reconfigure']);
          expect(run.code, describeRun(run)).toBe(0);
          const calls = eventsOf(expectValidStream(run), 'tool_call').filter((c) => c.name === 'write_file');
          expect(calls.map((c) => c.ok)).toEqual([false, false]);
          for (const c of calls) expect(c.output).toMatch(/^refused: the sandbox is read-only \(--sandbox read-only\): no file may be written/);
          expect(fs.readFileSync(path.join(s.cwd, '.nav-config.json'), 'utf8')).toBe('{}\n');
          expect(fs.existsSync(path.join(s.cwd, 'tools'))).toBe(false);
        },
        SCENARIO_TIMEOUT_MS,
      );

      it(
        'workspace-write: write_file of .git/hooks/pre-commit and .git/config is refused; a file in the tree is written',
        async () => {
          const s = await scenario(
            backend,
            writes({
              '.git/hooks/pre-commit': '#!/bin/sh\ntouch /tmp/pwned\n',
              '.git/config': '[core]\n\tfsmonitor = touch /tmp/pwned\n',
              'src/fix.js': 'export {};\n',
            }),
          );
          execFileSync('git', ['init', '-q'], { cwd: s.cwd });
          const config = fs.readFileSync(path.join(s.cwd, '.git', 'config'), 'utf8');
          const run = await s.navi(['run', '--sandbox', 'workspace-write', '-o', 'stream-json', 'hook it']);
          expect(run.code, describeRun(run)).toBe(0);
          const calls = eventsOf(expectValidStream(run), 'tool_call').filter((c) => c.name === 'write_file');
          expect(calls.map((c) => c.ok)).toEqual([false, false, true]);
          expect(fs.existsSync(path.join(s.cwd, '.git', 'hooks', 'pre-commit'))).toBe(false);
          expect(fs.readFileSync(path.join(s.cwd, '.git', 'config'), 'utf8')).toBe(config);
          expect(fs.readFileSync(path.join(s.cwd, 'src', 'fix.js'), 'utf8')).toBe('export {};\n');
        },
        SCENARIO_TIMEOUT_MS,
      );
    });
  },
);
