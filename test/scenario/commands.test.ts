/**
 * The light commands (SPEC §3): `profiles list|show` open neither database nor model, `doctor`
 * reports each check against a real (fake) Ollama and database, `init` writes starter files and
 * never overwrites.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanEnv, runNavi, stackLines } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import { closedPort } from '../support/ports.js';
import { LONG_SCENARIO_TIMEOUT_MS, SCENARIO_TIMEOUT_MS, describeRun, scenario, tempDir, writeFiles } from './helpers.js';

/** A working directory and an environment whose database path must stay nonexistent. */
function noDatabase(): { cwd: string; dataDir: string; env: Record<string, string> } {
  const cwd = tempDir('cwd');
  const dataDir = path.join(tempDir('nodb'), 'never-created');
  // An Ollama host nobody listens on: these commands must not need one.
  return { cwd, dataDir, env: cleanEnv({ NAVI_DATA_DIR: dataDir, OLLAMA_HOST: 'http://127.0.0.1:9' }) };
}

describe('profiles (no database, no model)', () => {
  it('`profiles list` shows the shipped profiles with the default marked, in text and json', async () => {
    const f = noDatabase();
    const text = await runNavi(['profiles', 'list'], { cwd: f.cwd, env: f.env });
    expect(text.code, describeRun(text)).toBe(0);
    expect(text.stdout).toMatch(/^\* default\s+shipped/m);
    expect(text.stdout).toMatch(/^ {2}coder\s+shipped/m);
    expect(text.stdout).toMatch(/^ {2}researcher\s+shipped/m);

    const json = await runNavi(['profiles', 'list', '-o', 'json'], { cwd: f.cwd, env: f.env });
    expect(json.code, describeRun(json)).toBe(0);
    expect(json.lines).toHaveLength(1);
    const parsed = JSON.parse(json.stdout) as { default_profile: string; profiles: Array<{ id: string; tools: string[] }> };
    expect(parsed.default_profile).toBe('default');
    expect(parsed.profiles.map((p) => p.id)).toEqual(expect.arrayContaining(['coder', 'default', 'researcher']));
    expect(parsed.profiles.find((p) => p.id === 'researcher')?.tools).not.toContain('write_file');
    expect(fs.existsSync(f.dataDir)).toBe(false);
  }, SCENARIO_TIMEOUT_MS);

  it('`profiles show default` prints the settings, tools and the persona + profile prompt', async () => {
    const f = noDatabase();
    const text = await runNavi(['profiles', 'show', 'default'], { cwd: f.cwd, env: f.env });
    expect(text.code, describeRun(text)).toBe(0);
    expect(text.stdout).toContain('profile default (shipped');
    expect(text.stdout).toMatch(/^tools: read_file, write_file, edit_file/m);
    expect(text.stdout).toMatch(/^system prompt \(\d+ bytes\):$/m);

    const json = await runNavi(['profiles', 'show', 'default', '-o', 'json'], { cwd: f.cwd, env: f.env });
    expect(json.code, describeRun(json)).toBe(0);
    const parsed = JSON.parse(json.stdout) as { id: string; tools: string[]; system_prompt: string; model: string };
    expect(parsed.id).toBe('default');
    expect(parsed.tools).toEqual(expect.arrayContaining(['read_file', 'shell']));
    expect(parsed.system_prompt).toContain('\n---\n');
    expect(parsed.model).toBe('qwen3:8b');
    expect(fs.existsSync(f.dataDir)).toBe(false);
  }, SCENARIO_TIMEOUT_MS);

  it('a project profile is listed; a broken one is flagged by list and is an exit-2 message naming its file, line and column when used', async () => {
    const f = noDatabase();
    writeFiles(f.cwd, {
      'profiles/reviewer/config.json': JSON.stringify({ description: 'Reviews diffs', tools: { agent: ['read_file'] } }),
      'profiles/reviewer/system_prompt.txt': 'You review diffs.',
    });
    const ok = await runNavi(['profiles', 'list'], { cwd: f.cwd, env: f.env });
    expect(ok.code, describeRun(ok)).toBe(0);
    expect(ok.stdout).toMatch(/^ {2}reviewer\s+project\s+Reviews diffs/m);

    writeFiles(f.cwd, { 'profiles/reviewer/config.json': '{\n  "description": "Reviews diffs",\n  "tools": [\n}' });
    // Issue 18 item 12: listed as broken (exit 0); using it is the exit-2 message.
    const list = await runNavi(['profiles', 'list'], { cwd: f.cwd, env: f.env });
    expect(list.code, describeRun(list)).toBe(0);
    expect(list.stdout).toMatch(/^! reviewer\s+project\s+broken: profiles\/reviewer\/config\.json:4:1: invalid JSON/m);
    const bad = await runNavi(['profiles', 'show', 'reviewer'], { cwd: f.cwd, env: f.env });
    expect(bad.code, describeRun(bad)).toBe(2);
    expect(stackLines(bad.stderr)).toEqual([]);
    expect(bad.stderr).toMatch(/profiles\/reviewer\/config\.json:4:1: invalid JSON/);
  }, SCENARIO_TIMEOUT_MS);

  it('`profiles show` of an unknown id fails naming the available ones', async () => {
    const f = noDatabase();
    const run = await runNavi(['profiles', 'show', 'nope'], { cwd: f.cwd, env: f.env });
    expect(run.code).not.toBe(0);
    expect(stackLines(run.stderr)).toEqual([]);
    expect(run.stderr).toMatch(/unknown profile 'nope'.*default/);
  }, SCENARIO_TIMEOUT_MS);
});

describe('init', () => {
  it('writes the starter files into an empty directory, and a second run leaves them alone', async () => {
    const f = noDatabase();
    const first = await runNavi(['init'], { cwd: f.cwd, env: f.env });
    expect(first.code, describeRun(first)).toBe(0);
    const files = ['.nav-config.json', 'profiles/my-agent/config.json', 'profiles/my-agent/system_prompt.txt', 'tasks/example.yaml'];
    for (const file of files) {
      expect(first.stdout).toContain(`created ${file}`);
      expect(fs.statSync(path.join(f.cwd, file)).size).toBeGreaterThan(0);
    }
    // What init wrote is valid: the config loads and the new profile is listed.
    const listed = await runNavi(['profiles', 'list', '-o', 'json'], { cwd: f.cwd, env: f.env });
    expect(listed.code, describeRun(listed)).toBe(0);
    expect((JSON.parse(listed.stdout) as { profiles: Array<{ id: string }> }).profiles.map((p) => p.id)).toContain('my-agent');

    const edited = '{ "default_profile": "coder" }\n';
    fs.writeFileSync(path.join(f.cwd, '.nav-config.json'), edited);
    const second = await runNavi(['init', '-o', 'json'], { cwd: f.cwd, env: f.env });
    expect(second.code, describeRun(second)).toBe(0);
    expect(JSON.parse(second.stdout)).toEqual({ created: [], skipped: files });
    expect(fs.readFileSync(path.join(f.cwd, '.nav-config.json'), 'utf8')).toBe(edited);
    expect(fs.existsSync(f.dataDir)).toBe(false);
  }, LONG_SCENARIO_TIMEOUT_MS);
});

forEachBackend((backend) => {
  describe('doctor', () => {
    it('passes every check against a running Ollama with the model pulled', async () => {
      const s = await scenario(backend, { turns: [] });
      const run = await s.navi(['doctor']);
      expect(run.code, describeRun(run)).toBe(0);
      const checks = run.lines.filter((l) => /^[✓✗] /.test(l));
      expect(checks.map((l) => l.split(/\s+/)[1])).toEqual(['config', 'profiles', 'database', 'mcp', 'sandbox', 'ollama', 'model', 'runner']);
      expect(checks.every((l) => l.startsWith('✓'))).toBe(true);
      expect(run.stdout).toContain(`${backend.kind === 'pglite' ? 'pglite' : 'postgres'} at`);
      expect(run.stdout).toMatch(/qwen3:8b is pulled, context length 40960/);
      expect(run.stdout).toContain('all checks passed');

      const json = await s.navi(['doctor', '-o', 'json']);
      expect(json.code, describeRun(json)).toBe(0);
      const parsed = JSON.parse(json.stdout) as { ok: boolean; checks: Array<{ name: string; ok: boolean }> };
      expect(parsed.ok).toBe(true);
      expect(parsed.checks.every((c) => c.ok)).toBe(true);
    }, SCENARIO_TIMEOUT_MS);

    it('fails (exit 1) with ✗ ollama when nothing listens on the host', async () => {
      const s = await scenario(backend, { turns: [] });
      const port = await closedPort();
      const run = await s.navi(['doctor', '--ollama-host', `http://127.0.0.1:${port}`], { host: false });
      expect(run.code, describeRun(run)).toBe(1);
      expect(run.stdout).toMatch(/^✗ ollama\s+.*127\.0\.0\.1:\d+/m);
      expect(run.stdout).toMatch(/^✗ model\s+skipped/m);
      expect(run.stdout).toMatch(/^✓ database/m);
      expect(run.stdout).toContain('some checks failed');
      expect(stackLines(run.stderr)).toEqual([]);
    }, SCENARIO_TIMEOUT_MS);

    it('fails (exit 1) with ✗ model and the pull command when the model is missing', async () => {
      const s = await scenario(backend, { turns: [] });
      const run = await s.navi(['doctor', '--model', 'nosuch:1b']);
      expect(run.code, describeRun(run)).toBe(1);
      expect(run.stdout).toMatch(/^✓ ollama/m);
      expect(run.stdout).toMatch(/^✗ model\s+.*ollama pull nosuch:1b/m);
    }, SCENARIO_TIMEOUT_MS);
  });
});
