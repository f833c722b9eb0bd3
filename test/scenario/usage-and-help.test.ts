/**
 * The small things a new user meets first (issue 11, bug 7), where the process is the point: a
 * usage error and a `--help` through the built CLI (exit code, stdout/stderr), `loop --help` on an
 * 80-column pty, and "not found" is exit 2 in every command. The usage errors and help texts
 * themselves (a typo'd flag gets a suggestion, a bad number is named as typed, every usage error
 * points to the `--help` of the command at hand, each command's help lists only the global flags
 * it uses and has examples) are checked in process: test/unit/cli-parsing.unit.test.ts and
 * test/unit/cli-help.unit.test.ts.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_PATH, cleanEnv, runNavi } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import { SCENARIO_TIMEOUT_MS, describeRun, expectJsonResult, scenario, tempDir } from './helpers.js';

/** A directory and a data directory that must never be created: usage errors touch nothing. */
function fixture(): { cwd: string; env: Record<string, string> } {
  const cwd = tempDir('cwd');
  return { cwd, env: cleanEnv({ NAVI_DATA_DIR: path.join(tempDir('nodb'), 'never-created'), OLLAMA_HOST: 'http://127.0.0.1:9' }) };
}

describe('through the built CLI (the rest of usage errors and help: test/unit/cli-parsing.unit.test.ts, cli-help.unit.test.ts)', () => {
  it('a usage error is exit 2 with its message on stderr alone; --help is exit 0 on stdout alone', async () => {
    const f = fixture();
    const bad = await runNavi(['run', '--max-iteration', '3', 'hello'], { cwd: f.cwd, env: f.env });
    expect(bad.code, describeRun(bad)).toBe(2);
    expect(bad.stderr).toBe("navi: Unknown argument: --max-iteration\nDid you mean --max-iterations (not --max-iteration)?\nRun 'navi run --help' for usage.\n");
    expect(bad.stdout).toBe('');
    const help = await runNavi(['runs', 'show', '--help'], { cwd: f.cwd, env: f.env });
    expect(help.code, describeRun(help)).toBe(0);
    expect(help.stdout).toMatch(/^navi runs show <id>\n/);
    expect(help.stdout).toContain('  navi runs show run_mikq3x2a0_7hq2 --format junit > junit.xml\n');
    expect(help.stderr).toBe('');
  }, SCENARIO_TIMEOUT_MS);
});

describe('--help of each command', () => {
  it.skipIf(!existsSync('/usr/bin/script'))('`loop --help` on an 80-column terminal: no line wider, examples whole, nothing glued', async () => {
    const f = fixture();
    const cmd = `stty cols 80; exec ${process.execPath} ${CLI_PATH} loop --help`;
    const screen = await new Promise<string>((resolve, reject) => {
      const child = spawn('script', ['-qefc', cmd, '/dev/null'], { cwd: f.cwd, env: { ...f.env, TERM: 'xterm' }, stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      // Hang guard, far above the real fraction of a second.
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`loop --help in a pty did not finish:\n${out}`));
      }, 30_000);
      child.on('exit', () => {
        clearTimeout(timer);
        resolve(out);
      });
    });
    const lines = screen.replace(/\r/g, '').split('\n');
    expect(lines.filter((l) => [...l].length > 80), screen).toEqual([]);
    expect(lines).toContain('  navi loop "make npm test pass" --max-iterations 8 --never-pause');
    expect(lines).toContain('  navi loop --resume run_mikq3x2a0_7hq2 --extend 3');
    // A description run into a type column ("stderr[boolean]").
    expect(screen).not.toMatch(/\S\[(string|boolean|number|array|choices|default)/);
    // Every option on the line of its flag, no line that is only a type or a default.
    expect(lines.filter((l) => /^\s+\[[^\]]+\](\s+\[[^\]]+\])*\s*$/.test(l))).toEqual([]);
  }, SCENARIO_TIMEOUT_MS);
});

describe('"not found" without a database: exit 2', () => {
  it.each([
    [['profiles', 'show', 'nope'], /unknown profile 'nope'/],
    [['tasks', 'show', 'nope'], /no task named 'nope'/],
  ])('%j', async (args, pattern) => {
    const f = fixture();
    const run = await runNavi(args, { cwd: f.cwd, env: f.env });
    expect(run.code, describeRun(run)).toBe(2);
    expect(run.stderr).toMatch(pattern);
  }, SCENARIO_TIMEOUT_MS);
});

forEachBackend((backend) => {
  describe('"not found" is exit 2 in every command', () => {
    it('sessions show/rm/compact, runs show, memory forget, run -s/-p, loop --resume', async () => {
      const s = await scenario(backend, { turns: [] });
      const cases: Array<[string[], RegExp]> = [
        [['sessions', 'show', 'nope'], /no session 'nope'; see: navi sessions list/],
        [['sessions', 'rm', 'nope'], /no session 'nope'/],
        [['sessions', 'compact', 'nope'], /no session 'nope'/],
        [['runs', 'show', 'nope'], /no loop run 'nope'; see: navi runs list/],
        [['memory', 'forget', 'nope'], /no memory 'nope'/],
        [['run', '-s', 'nope', 'hello'], /no session 'nope'/],
        [['run', '-p', 'nope', 'hello'], /unknown profile 'nope'/],
        [['loop', '--resume', 'nope'], /no loop run 'nope'/],
      ];
      for (const [args, pattern] of cases) {
        const run = await s.navi(args);
        expect(run.code, `${args.join(' ')}\n${describeRun(run)}`).toBe(2);
        expect(run.stderr).toMatch(pattern);
      }
      const json = await s.navi(['sessions', 'show', 'nope', '-o', 'json']);
      expect(json.code).toBe(2);
      const run = await s.navi(['run', '-o', 'json', '-s', 'nope', 'hello']);
      expectJsonResult(run, 'invalid_input', 'session_not_found');
      expect(s.chats()).toHaveLength(0);
    }, SCENARIO_TIMEOUT_MS);
  });
});
