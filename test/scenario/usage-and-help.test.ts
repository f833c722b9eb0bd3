/**
 * The small things a new user meets first (issue 11, bug 7): a typo'd flag gets a suggestion,
 * a bad number is named as typed, every usage error points to the `--help` of the command at
 * hand, each command's help lists only the global flags it uses and has examples, `loop --help`
 * reads well at 80 columns, and "not found" is exit 2 in every command.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_PATH, cleanEnv, runNavi, stackLines } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import { SCENARIO_TIMEOUT_MS, describeRun, expectJsonResult, scenario, tempDir } from './helpers.js';

/** A directory and a data directory that must never be created: usage errors touch nothing. */
function fixture(): { cwd: string; env: Record<string, string> } {
  const cwd = tempDir('cwd');
  return { cwd, env: cleanEnv({ NAVI_DATA_DIR: path.join(tempDir('nodb'), 'never-created'), OLLAMA_HOST: 'http://127.0.0.1:9' }) };
}

/** Every command path, as typed after `navi`. */
const COMMANDS = [
  'run',
  'loop',
  'tasks list',
  'tasks show',
  'tasks validate',
  'runs list',
  'runs show',
  'sessions list',
  'sessions show',
  'sessions rm',
  'sessions compact',
  'profiles list',
  'profiles show',
  'memory list',
  'memory forget',
  'db migrate',
  'doctor',
  'init',
  'serve',
];

describe('usage errors', () => {
  it.each([
    [['run', '--max-iteration', '3', 'hello'], /Unknown argument: --max-iteration\nDid you mean --max-iterations \(not --max-iteration\)\?\nRun 'navi run --help' for usage\./],
    [['run', '--sesion', 'abc', 'hello'], /Did you mean --session \(not --sesion\)\?\nRun 'navi run --help'/],
    [['loop', 'task.yaml', '--never-paus'], /Did you mean --never-pause .*\nRun 'navi loop --help'/],
    [['sessions', 'list', '--limt', '3'], /Did you mean --limit .*\nRun 'navi sessions list --help'/],
    [['runs', 'show'], /Run 'navi runs show --help' for usage\./],
  ])('%j: exit 2, the flag meant and the subcommand’s --help', async (args, pattern) => {
    const f = fixture();
    const run = await runNavi(args, { cwd: f.cwd, env: f.env });
    expect(run.code, describeRun(run)).toBe(2);
    expect(run.stderr).toMatch(pattern);
    expect(run.stderr).not.toContain("'navi --help'");
    expect(stackLines(run.stderr)).toEqual([]);
  }, SCENARIO_TIMEOUT_MS);

  it('a flag that is nothing like a known one gets no guess', async () => {
    const f = fixture();
    const run = await runNavi(['run', '--zzzz', 'hello'], { cwd: f.cwd, env: f.env });
    expect(run.code).toBe(2);
    expect(run.stderr).not.toContain('Did you mean');
  }, SCENARIO_TIMEOUT_MS);

  it.each([
    [['run', '--max-iterations', 'abc', 'hello'], "--max-iterations must be a positive integer (got 'abc')"],
    [['run', '--max-iterations=2x', 'hello'], "--max-iterations must be a positive integer (got '2x')"],
    [['loop', 'fix it', '--max-iterations', 'abc'], "--max-iterations must be a positive integer (got 'abc')"],
    [['loop', '--resume', 'run_x', '--extend', 'lots'], "--extend must be a positive integer (got 'lots')"],
    [['sessions', 'list', '--limit', 'ten'], "--limit must be a positive integer (got 'ten')"],
  ])('%j names the value as typed, not NaN', async (args, message) => {
    const f = fixture();
    const run = await runNavi(args, { cwd: f.cwd, env: f.env });
    expect(run.code, describeRun(run)).toBe(2);
    expect(run.stderr).toContain(message);
    expect(run.stderr).not.toContain('NaN');
  }, SCENARIO_TIMEOUT_MS);
});

describe('--help of each command', () => {
  it('lists only the global flags the command uses', async () => {
    const f = fixture();
    const help = async (cmd: string): Promise<string> => {
      const run = await runNavi([...cmd.split(' '), '--help'], { cwd: f.cwd, env: f.env });
      expect(run.code, describeRun(run)).toBe(0);
      return run.stdout;
    };
    for (const cmd of ['tasks', 'tasks list', 'profiles', 'profiles show', 'init']) {
      const text = await help(cmd);
      for (const flag of ['--ollama-host', '--db', '--model', '--profile', '--version']) expect(text, `${cmd} --help`).not.toContain(flag);
      expect(text).toContain('--cwd');
    }
    for (const cmd of ['runs show', 'sessions list', 'memory list']) {
      const text = await help(cmd);
      expect(text, cmd).toContain('--db');
      expect(text, cmd).not.toContain('--ollama-host');
    }
    const run = await help('run');
    for (const flag of ['--db', '--ollama-host', '--model', '--profile', '--session', '--max-iterations']) expect(run).toContain(flag);
    // The command's own options come before the global ones.
    expect(run.indexOf('--session')).toBeLessThan(run.indexOf('Global options:'));
  }, SCENARIO_TIMEOUT_MS);

  it('every command has examples, whole command lines', async () => {
    const f = fixture();
    for (const cmd of COMMANDS) {
      const run = await runNavi([...cmd.split(' '), '--help'], { cwd: f.cwd, env: { ...f.env, COLUMNS: '80' } });
      expect(run.code, describeRun(run)).toBe(0);
      const examples = run.stdout.slice(run.stdout.indexOf('Examples:'));
      expect(run.stdout, `${cmd} --help`).toContain('Examples:');
      expect(examples, `${cmd} --help`).toMatch(new RegExp(`^ {2}(\\S+ \\| )?navi ${cmd}\\b`, 'm'));
    }
  }, SCENARIO_TIMEOUT_MS);

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
