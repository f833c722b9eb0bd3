/**
 * SPEC §4 exit 2 for invalid input, with one `navi:` line on stderr and never a stack trace,
 * before any database or model is touched; and the commands that must open neither. Here the
 * cases a command finds (a config file, a missing prompt) and the built CLI's --version/--help;
 * the ones the parser finds (an unknown flag, a bad value, a mistyped command, options without a
 * command) run in process: test/unit/cli-parsing.unit.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanEnv, runNavi } from '../support/cli.js';
import { LONG_SCENARIO_TIMEOUT_MS, SCENARIO_TIMEOUT_MS, describeRun, expectFailure, expectJsonResult, tempDir, writeFiles } from './helpers.js';

describe('invalid input (exit 2) before any database or model is touched', () => {
  /** A working directory and a data directory that must stay nonexistent. */
  function fixture(): { cwd: string; dataDir: string; env: Record<string, string> } {
    const cwd = tempDir('cwd');
    const dataDir = path.join(tempDir('nodb'), 'never-created');
    return { cwd, dataDir, env: cleanEnv({ NAVI_DATA_DIR: dataDir, OLLAMA_HOST: 'http://127.0.0.1:9' }) };
  }

  const cases: Array<{ name: string; args: string[]; files?: Record<string, string>; pattern: RegExp }> = [
    {
      name: 'invalid JSON in .nav-config.json (file:line:col)',
      args: ['run', 'hello'],
      files: { '.nav-config.json': '{\n  "llm": {\n    "model": "qwen3:8b",\n  }\n}\n' },
      pattern: /\.nav-config\.json:4:3: invalid JSON/,
    },
    {
      name: 'a bad config value (names the key and what is allowed)',
      args: ['run', 'hello'],
      files: { '.nav-config.json': JSON.stringify({ loop_mode: { max_iterations: 99 } }) },
      pattern: /\.nav-config\.json.*loop_mode\.max_iterations.*20/,
    },
    {
      name: 'a bad value in a --config file',
      args: ['run', '--config', 'conf/navi.json', 'hello'],
      files: { 'conf/navi.json': JSON.stringify({ llm: { num_ctx: 'lots' } }) },
      pattern: /conf\/navi\.json.*llm\.num_ctx/,
    },
    { name: 'a missing --config file', args: ['run', '--config', 'nope.json', 'hello'], pattern: /nope\.json.*not found/ },
    { name: 'no prompt and an empty stdin', args: ['run'], pattern: /no prompt/ },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const f = fixture();
      if (c.files) writeFiles(f.cwd, c.files);
      const run = await runNavi(c.args, { cwd: f.cwd, env: f.env });
      expectFailure(run, 2, c.pattern);
      expect(fs.existsSync(f.dataDir), 'no database was opened').toBe(false);
    }, SCENARIO_TIMEOUT_MS);
  }

  it('json mode: a config error is still exactly one result object on stdout', async () => {
    const f = fixture();
    writeFiles(f.cwd, { '.nav-config.json': '{"llm": {"think": "maybe"}}' });
    const run = await runNavi(['run', '-o', 'json', 'hello'], { cwd: f.cwd, env: f.env });
    expectFailure(run, 2, /llm\.think/);
    expectJsonResult(run, 'invalid_input', 'config_invalid');
  }, SCENARIO_TIMEOUT_MS);

  it('--version, --help and a bare `navi` exit 0 and open no database', async () => {
    const f = fixture();
    const version = await runNavi(['--version'], { cwd: f.cwd, env: f.env });
    expect(version.code, describeRun(version)).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    for (const args of [['--help'], ['run', '--help'], ['sessions', '--help'], []]) {
      const help = await runNavi(args, { cwd: f.cwd, env: f.env });
      expect(help.code, describeRun(help)).toBe(0);
      expect(help.stdout).toMatch(/navi/);
      expect(help.stderr).toBe('');
    }
    expect(fs.existsSync(f.dataDir)).toBe(false);
  }, LONG_SCENARIO_TIMEOUT_MS);
});
