/**
 * What navi does with its arguments before any command runs, in the test's process (issue 36):
 * usage errors (issue 11, bug 7), the shorthand and a bare word (issue 11, issue 18 item 9), the
 * flags of claude -p / codex exec / gemini -p that navi does not take (issue 18 item 21), and
 * flag values checked as typed. Every case parses only (`parseInProcess`): no command is loaded or
 * run, so none can open a database or call a model — `ran` says which command would have run, and
 * a usage error must leave it undefined. The process-level checks (exit codes through the real bin,
 * stdout/stderr of the built CLI) stay in test/scenario/usage-and-help.test.ts and
 * invalid-input.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseInProcess, type ParseResult } from '../support/in-process.js';

const VERSION = (JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;

/** The environment and directory of every case: nothing of the test process's environment. */
const ENV = { PATH: '/usr/bin:/bin', HOME: os.tmpdir() };

function parse(args: readonly string[], env: Record<string, string> = {}): Promise<ParseResult> {
  return parseInProcess(args, { env: { ...ENV, ...env }, cwd: os.tmpdir() });
}

/** Lines of a stack trace. */
function stackLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => /^\s+at /.test(l));
}

/** Exit `code`, exactly one `navi: …` line (a usage error continues on more) matching `pattern`, no stack, nothing on stdout, nothing run. */
function expectFailure(r: ParseResult, code: number, pattern: RegExp): void {
  expect(r.code, r.stderr).toBe(code);
  expect(stackLines(r.stderr), 'no stack trace on stderr').toEqual([]);
  expect(r.stderr.split('\n').filter((l) => l.startsWith('navi: ')), `one navi: line in ${r.stderr}`).toHaveLength(1);
  expect(r.stderr).toMatch(pattern);
  expect(r.stdout).toBe('');
  expect(r.ran, 'no command ran').toBeUndefined();
}

describe('usage errors', () => {
  it.each([
    [['run', '--max-iteration', '3', 'hello'], /Unknown argument: --max-iteration\nDid you mean --max-iterations \(not --max-iteration\)\?\nRun 'navi run --help' for usage\./],
    [['run', '--sesion', 'abc', 'hello'], /Did you mean --session \(not --sesion\)\?\nRun 'navi run --help'/],
    [['loop', 'task.yaml', '--never-paus'], /Did you mean --never-pause .*\nRun 'navi loop --help'/],
    [['sessions', 'list', '--limt', '3'], /Did you mean --limit .*\nRun 'navi sessions list --help'/],
    [['runs', 'show'], /Run 'navi runs show --help' for usage\./],
  ])('%j: exit 2, the flag meant and the subcommand’s --help', async (args, pattern) => {
    const r = await parse(args);
    expectFailure(r, 2, pattern);
    expect(r.stderr).not.toContain("'navi --help'");
  });

  it('a flag that is nothing like a known one gets no guess', async () => {
    const r = await parse(['run', '--zzzz', 'hello']);
    expectFailure(r, 2, /Unknown argument: --zzzz/);
    expect(r.stderr).not.toContain('Did you mean');
  });

  it.each([
    [['run', '--max-iterations', 'abc', 'hello'], "--max-iterations must be a positive integer (got 'abc')"],
    [['run', '--max-iterations=2x', 'hello'], "--max-iterations must be a positive integer (got '2x')"],
    [['loop', 'fix it', '--max-iterations', 'abc'], "--max-iterations must be a positive integer (got 'abc')"],
    [['loop', '--resume', 'run_x', '--extend', 'lots'], "--extend must be a positive integer (got 'lots')"],
    [['sessions', 'list', '--limit', 'ten'], "--limit must be a positive integer (got 'ten')"],
  ])('%j names the value as typed, not NaN', async (args, message) => {
    const r = await parse(args);
    expectFailure(r, 2, /must be a positive integer/);
    expect(r.stderr).toContain(message);
    expect(r.stderr).not.toContain('NaN');
  });
});

describe('invalid input (exit 2) before any database or model is touched', () => {
  it.each([
    ['an unknown flag', ['run', 'hello', '--bogus-flag'], /bogus-flag/],
    ['an unknown flag on a command that opens the database', ['sessions', 'list', '--bogus'], /bogus/],
    ['a bad --output value', ['run', '--output', 'yaml', 'hello'], /output.*yaml|yaml.*output/i],
    ['--max-iterations 0', ['run', '--max-iterations', '0', 'hello'], /max-iterations/],
    // Any other first word is a prompt (`navi "…"` is `navi run "…"`, issue 11); one a couple of edits from a command is a typo.
    ['a mistyped command', ['sesions', 'list'], /unknown command 'sesions'\. Did you mean sessions\?/],
    ['options without a command or prompt', ['-p', 'coder'], /no command and no prompt/],
  ])('%s', async (_name, args, pattern) => {
    expectFailure(await parse(args), 2, pattern);
  });
});

describe('navi with no command', () => {
  it('`navi -p "prompt"` (claude/gemini spelling) is exit 2 naming -p as --profile and the command to use; no model call', async () => {
    const r = await parse(['-p', 'summarise the README']);
    expectFailure(r, 2, /-p is navi's --profile/);
    expect(r.stderr).toContain(`navi 'summarise the README'`);
  });

  it('options without a command or prompt are exit 2, not help and exit 0', async () => {
    for (const args of [['-o', 'json'], ['--quiet'], ['-m', 'qwen3:8b']]) expectFailure(await parse(args), 2, /no command and no prompt/);
  });

  it('a mistyped command is exit 2 with a suggestion, never a prompt sent to the model', async () => {
    expectFailure(await parse(['sesions', 'list']), 2, /unknown command 'sesions'\. Did you mean sessions\?/);
  });

  it('`navi` alone still prints help and exits 0 (SPEC §3)', async () => {
    const r = await parse([]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('navi "PROMPT" [options]');
    expect(r.stderr).toBe('');
    expect(r.ran).toBeUndefined();
  });

  it('`navi "prompt"` is `navi run "prompt"`, options before and after included; a sentence is a prompt', async () => {
    const cases: Array<[string[], string[]]> = [
      [['review the config'], ['review the config']],
      [['-o', 'json', 'review', 'it', 'again', '--no-loop'], ['review', 'it', 'again']],
      [['show me the status'], ['show me the status']],
      [['why?'], ['why?']],
    ];
    for (const [args, prompt] of cases) {
      const r = await parse(args);
      expect(r.code, r.stderr).toBe(0);
      expect(r.ran?.command, args.join(' ')).toBe('run');
      expect(r.ran?.argv.prompt).toEqual(prompt);
    }
    expect((await parse(['-o', 'json', 'review', 'it', 'again', '--no-loop'])).ran?.argv).toMatchObject({ output: 'json', loop: false });
  });
});

describe('a lone bare word (issue 18 item 9)', () => {
  it('navi status, list, show, resume, config, models, update, ls: exit 2 "quote it or use navi run", no model call', async () => {
    for (const word of ['status', 'list', 'show', 'resume', 'config', 'models', 'update', 'ls']) expectFailure(await parse([word]), 2, /quote it or use navi run/);
  });

  it('navi version prints the version', async () => {
    const r = await parse(['version']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${VERSION}\n`);
    expect(r.stderr).toBe('');
  });
});

describe('flags from claude -p, codex exec, gemini -p (issue 18 item 21)', () => {
  it('the flags navi does not have are exit 2 saying what navi does instead; nothing runs', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--dangerously-skip-permissions'], /--dangerously-skip-permissions \(claude -p\): navi does not take it; instead: /],
      [['--full-auto'], /--full-auto \(codex exec\): navi does not take it/],
      [['--yolo'], /--yolo .*navi does not take it/],
      [['--skip-git-repo-check'], /nothing to skip/],
      [['--include-directories', 'x'], /--add-dir DIR/],
      [['-C', '/tmp'], /instead: --cwd DIR/],
    ];
    for (const [flags, message] of cases) expectFailure(await parse(['run', ...flags, 'say something']), 2, message);
  });
});

describe('navi queue add: flags checked before the queue is opened (exit 2)', () => {
  it.each([
    [['queue', 'add', 'task.yaml', '--repo', 'https://example.invalid/a.git', '--priority', '-1'], '--priority'],
    [['worker', '--concurrency', '0'], '--concurrency'],
    // yargs itself takes a bare --upload-pack=… for a flag: exit 2 before navi sees it.
    [['queue', 'add', 'task.yaml', '--repo', '--upload-pack=touch /tmp/evil'], 'repo'],
  ])('%j', async (args, said) => {
    const r = await parse(args, { DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none' });
    expectFailure(r, 2, /./);
    expect(r.stderr).toContain(said);
  });
});
