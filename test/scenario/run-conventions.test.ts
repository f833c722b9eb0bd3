/**
 * The conventions users bring from claude -p, codex exec, gemini -p and goose run (issue 11):
 * project instructions (AGENTS.md, else CLAUDE.md/GEMINI.md) in the one system message,
 * `--no-project-instructions`, `--append-system-prompt`, `--allowed-tools`/`--disallowed-tools`,
 * `-c/--continue`, `--output-last-message`, and the `--output-format`/`--max-turns` aliases.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import type { FakeScript } from '../support/fake-ollama.js';
import { SCENARIO_TIMEOUT_MS, describeRun, expectFailure, requestMessages, resultOf, scenario, writeFiles, type Scenario } from './helpers.js';

/** The system message of chat request `i`. */
function systemOf(s: Scenario, i: number): string {
  const system = requestMessages(s.chats()[i]).filter((m) => m.role === 'system');
  expect(system, 'exactly one system message').toHaveLength(1);
  return String(system[0]?.content);
}

function toolsOf(s: Scenario, i: number): string[] {
  const tools = (s.chats()[i]?.body?.tools ?? []) as Array<{ function: { name: string } }>;
  return tools.map((t) => t.function.name);
}

const TWO_CALLS: FakeScript = {
  turns: [{ tool_calls: [{ name: 'list_dir', arguments: {} }] }, { content: 'Done.' }],
  on_exhausted: 'error',
};

forEachBackend((backend) => {
  describe('project instructions', () => {
    it('AGENTS.md at the repository root and CLAUDE.md below it, root first, the same bytes in every call of the run', async () => {
      const s = await scenario(backend, TWO_CALLS);
      execFileSync('git', ['init', '-q'], { cwd: s.cwd });
      writeFiles(s.cwd, {
        'AGENTS.md': '# Rules\nUse tabs, never spaces.\n',
        // A directory with AGENTS.md ignores its CLAUDE.md; one without uses it.
        'CLAUDE.md': 'ignored: AGENTS.md is here\n',
        'pkg/web/CLAUDE.md': 'Run `npm test` in pkg/web before committing.\n',
        'pkg/web/GEMINI.md': 'ignored: CLAUDE.md is here\n',
      });
      const cwd = path.join(s.cwd, 'pkg', 'web');
      const run = await s.navi(['run', 'tidy up'], { cwd });
      expect(run.code, describeRun(run)).toBe(0);
      const system = systemOf(s, 0);
      expect(system).toContain('## Project instructions');
      expect(system).toContain('### AGENTS.md\n# Rules\nUse tabs, never spaces.');
      expect(system).toContain('### pkg/web/CLAUDE.md\nRun `npm test` in pkg/web before committing.');
      expect(system.indexOf('### AGENTS.md')).toBeLessThan(system.indexOf('### pkg/web/CLAUDE.md'));
      expect(system).not.toContain('ignored');
      expect(systemOf(s, 1)).toBe(system);
    }, SCENARIO_TIMEOUT_MS);

    it('--no-project-instructions leaves them out; outside a git repository only the working directory is searched', async () => {
      const s = await scenario(backend, { turns: [{ content: 'a' }, { content: 'b' }], on_exhausted: 'error' });
      writeFiles(s.cwd, { 'AGENTS.md': 'Parent rules.\n', 'sub/GEMINI.md': 'Sub rules.\n' });
      const off = await s.navi(['run', '--no-project-instructions', 'hi']);
      expect(off.code, describeRun(off)).toBe(0);
      expect(systemOf(s, 0)).not.toContain('Project instructions');
      const sub = await s.navi(['run', 'hi'], { cwd: path.join(s.cwd, 'sub') });
      expect(sub.code, describeRun(sub)).toBe(0);
      expect(systemOf(s, 1)).toContain('### GEMINI.md\nSub rules.');
      expect(systemOf(s, 1)).not.toContain('Parent rules.');
    }, SCENARIO_TIMEOUT_MS);

    it('`profiles show` lists the files found and includes them in the system prompt; json names them', async () => {
      const s = await scenario(backend, TWO_CALLS);
      execFileSync('git', ['init', '-q'], { cwd: s.cwd });
      writeFiles(s.cwd, { 'AGENTS.md': 'Be brief.\n' });
      const text = await s.navi(['profiles', 'show', 'default'], { host: false });
      expect(text.code, describeRun(text)).toBe(0);
      expect(text.stdout).toContain(`project instructions:\n  ${path.join(s.cwd, 'AGENTS.md')} (9 bytes)`);
      expect(text.stdout).toContain('### AGENTS.md\nBe brief.');
      const json = await s.navi(['profiles', 'show', 'default', '-o', 'json'], { host: false });
      const shown = JSON.parse(json.stdout) as { project_instructions: { root: string; files: Array<{ name: string; bytes: number }> } };
      expect(shown.project_instructions.files).toEqual([{ path: path.join(s.cwd, 'AGENTS.md'), name: 'AGENTS.md', bytes: 9, used_bytes: 9 }]);
      const off = await s.navi(['profiles', 'show', 'default', '--no-project-instructions'], { host: false });
      expect(off.stdout).toContain('project instructions:\n  off (--no-project-instructions)');
      expect(off.stdout).not.toContain('Be brief.');
    }, SCENARIO_TIMEOUT_MS);

    it('an instruction file navi cannot read as a file is exit 2 naming it', async () => {
      const s = await scenario(backend, TWO_CALLS);
      execFileSync('mkfifo', [path.join(s.cwd, 'AGENTS.md')]);
      const run = await s.navi(['run', 'hi']);
      expectFailure(run, 2, /AGENTS\.md: is not a regular file/);
      expect(s.chats()).toHaveLength(0);
    }, SCENARIO_TIMEOUT_MS);
  });

  describe('one-run flags', () => {
    it('--append-system-prompt goes at the end of the one system message, after the project instructions', async () => {
      const s = await scenario(backend, TWO_CALLS);
      writeFiles(s.cwd, { 'AGENTS.md': 'Project rule.\n' });
      const run = await s.navi(['run', '--append-system-prompt', 'Answer in French.', 'hi']);
      expect(run.code, describeRun(run)).toBe(0);
      const system = systemOf(s, 0);
      expect(system.endsWith('Project rule.\n\nAnswer in French.')).toBe(true);
      expect(systemOf(s, 1)).toBe(system);
    }, SCENARIO_TIMEOUT_MS);

    it('--allowed-tools and --disallowed-tools narrow the tools offered; a name the profile lacks is exit 2', async () => {
      const s = await scenario(backend, { turns: [{ content: 'a' }, { content: 'b' }], on_exhausted: 'error' });
      const only = await s.navi(['run', '--allowed-tools', 'read_file,list_dir', 'hi']);
      expect(only.code, describeRun(only)).toBe(0);
      expect(toolsOf(s, 0)).toEqual(['read_file', 'list_dir']);
      const without = await s.navi(['run', '--disallowed-tools', 'shell', '--disallowed-tools', 'write_file edit_file', 'hi']);
      expect(without.code, describeRun(without)).toBe(0);
      expect(toolsOf(s, 1)).not.toEqual(expect.arrayContaining(['shell']));
      expect(toolsOf(s, 1)).toEqual(expect.arrayContaining(['read_file', 'todo']));
      expect(toolsOf(s, 1).filter((t) => ['shell', 'write_file', 'edit_file'].includes(t))).toEqual([]);
      // researcher has no shell: the filter narrows, it never grants.
      const grant = await s.navi(['run', '-p', 'researcher', '--allowed-tools', 'shell', 'hi']);
      expectFailure(grant, 2, /--allowed-tools: profile 'researcher' has no tool 'shell'; its tools: /);
      expect(s.chats()).toHaveLength(2);
    }, SCENARIO_TIMEOUT_MS);

    it('--output-last-message writes the final answer to a file (relative to --cwd, like --file)', async () => {
      const s = await scenario(backend, TWO_CALLS);
      // A file that cannot be written is refused before the work, not after it.
      const run = await s.navi(['run', '--output-last-message', 'out/last.txt', 'hi']);
      expectFailure(run, 2, /--output-last-message out\/last\.txt: directory .*out does not exist/);
      expect(s.chats()).toHaveLength(0);
      fs.mkdirSync(path.join(s.cwd, 'out'));
      const ok = await s.navi(['run', '--output-last-message', 'out/last.txt', 'hi']);
      expect(ok.code, describeRun(ok)).toBe(0);
      expect(fs.readFileSync(path.join(s.cwd, 'out', 'last.txt'), 'utf8')).toBe('Done.\n');
    }, SCENARIO_TIMEOUT_MS);

    it('-c/--continue picks the most recent session started in this directory, not one from elsewhere', async () => {
      const s = await scenario(backend, { turns: [{ content: 'first' }, { content: 'elsewhere' }, { content: 'second' }], on_exhausted: 'error' });
      const none = await s.navi(['run', '-c', 'hello']);
      expectFailure(none, 2, /--continue: no session was started in /);
      const first = await s.navi(['run', '-o', 'json', 'remember the word kiwi']);
      const other = path.join(s.cwd, 'other');
      fs.mkdirSync(other);
      const elsewhere = await s.navi(['run', '-o', 'json', 'unrelated'], { cwd: other });
      expect(elsewhere.code, describeRun(elsewhere)).toBe(0);
      const next = await s.navi(['run', '-o', 'json', '--continue', 'which word?']);
      expect(next.code, describeRun(next)).toBe(0);
      expect(resultOf(next).session_id).toBe(resultOf(first).session_id);
      const contents = requestMessages(s.chats()[2]).map((m) => m.content);
      expect(contents).toEqual(expect.arrayContaining(['remember the word kiwi', 'first', 'which word?']));
      expect(contents).not.toContain('unrelated');
      const both = await s.navi(['run', '-c', '-s', 'x', 'hi']);
      expectFailure(both, 2, /--continue and --session/);
    }, SCENARIO_TIMEOUT_MS);

    it('--output-format and --max-turns are aliases of --output and --max-iterations', async () => {
      const s = await scenario(backend, TWO_CALLS);
      const run = await s.navi(['run', '--output-format', 'json', '--max-turns', '1', 'hi']);
      expect(run.code, describeRun(run)).toBe(3);
      expect(resultOf(run)).toMatchObject({ status: 'incomplete', reason: 'max_iterations', iterations: 1 });
      // Through yargs too (an unusual flag sends it past the fast path).
      s.fake.setScript(TWO_CALLS);
      const slow = await s.navi(['run', '--output-format=json', '--max-turns=1', '--print', 'hi']);
      expect(slow.code, describeRun(slow)).toBe(3);
      expect(resultOf(slow)).toMatchObject({ status: 'incomplete', iterations: 1 });
    }, SCENARIO_TIMEOUT_MS);
  });
});
