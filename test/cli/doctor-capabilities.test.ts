/**
 * `navi doctor` against a fake Ollama (SPEC §13): the model's capabilities from `/api/show`,
 * a model without `tools` fails the check (server/routes.go answers 400 to tools for it), a
 * model without `thinking` is a warning when llm.think is on, and the server must be at least
 * 0.9.0 for `think` (api/types.go `ChatRequest.Think`, first in tag v0.9.0-rc0). Releases before
 * fixes navi relies on are warnings (src/llm/server-versions.ts), and `OLLAMA_HOST` is read as
 * Ollama's envconfig reads it.
 */
import { DEFAULT_VERSION as DEFAULT_FAKE_VERSION } from '../support/fake-ollama-script.js';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { THINK_MIN_VERSION, doctorNumCtx, parseOllamaVersion } from '../../src/cli/commands/doctor.js';
import { forEachBackend } from '../support/databases.js';
import type { FakeModel } from '../support/fake-ollama.js';
import { SCENARIO_TIMEOUT_MS, describeRun, scenario } from '../scenario/helpers.js';

interface DoctorJson {
  ok: boolean;
  checks: Array<{ name: string; ok: boolean; detail: string; warnings?: string[]; version?: string; capabilities?: string[] }>;
}

const MODELS: FakeModel[] = [
  { name: 'qwen3:8b', context_length: 40960 },
  { name: 'llama3.1:8b', capabilities: ['completion'] },
  { name: 'mistral:7b', capabilities: ['completion', 'tools'] },
];

describe('doctorNumCtx', () => {
  it.each<[number, boolean, number | undefined, string, string | undefined]>([
    [65536, false, 40960, '; runs use num_ctx 40960 (the default 65536 fitted to the model)', undefined],
    [65536, true, 40960, '; runs use num_ctx 40960', 'Ollama clamps it, so runs use 40960'],
    [32768, true, 40960, '', undefined],
    [65536, false, undefined, '', undefined],
    [65536, false, 131072, '', undefined],
  ])('num_ctx %i explicit %s, context length %s', (configured, explicit, len, note, warning) => {
    const got = doctorNumCtx(configured, explicit, len);
    expect(got.note).toBe(note);
    if (warning === undefined) expect(got.warning).toBeUndefined();
    else expect(got.warning).toContain(warning);
  });
});

describe('parseOllamaVersion', () => {
  it.each<[string, [number, number, number] | undefined]>([
    ['0.12.0', [0, 12, 0]],
    ['0.9.0', [0, 9, 0]],
    ['v0.9.1', [0, 9, 1]],
    ['0.9.0-rc0', [0, 9, 0]],
    ['0.8.0', [0, 8, 0]],
    ['0.0.0', undefined],
    ['', undefined],
    ['dev', undefined],
    ['0.9', undefined],
  ])('%j → %j', (text, want) => {
    expect(parseOllamaVersion(text)).toEqual(want);
  });

  it('needs 0.9.0 for think', () => {
    expect(THINK_MIN_VERSION).toEqual([0, 9, 0]);
  });
});

function line(stdout: string, name: string): string {
  return stdout.split('\n').find((l) => new RegExp(`^[✓✗] ${name}\\b`).test(l)) ?? '';
}

forEachBackend(
  (backend) => {
    describe('doctor: model capabilities', () => {
      it('shows the capabilities of a tool- and thinking-capable model and passes (text and json)', async () => {
        const s = await scenario(backend, { models: MODELS, turns: [] });
        const run = await s.navi(['doctor']);
        expect(run.code, describeRun(run)).toBe(0);
        expect(line(run.stdout, 'model')).toMatch(
          /^✓ model\s+qwen3:8b is pulled, context length 40960, capabilities: completion, tools, thinking; runs use num_ctx 40960 \(the default 65536 fitted to the model\)$/,
        );
        // Issue 18, item 15: no warning about a num_ctx the user never set.
        expect(run.stdout).not.toMatch(/warning: .*(thinking|capabilities|version|num_ctx)/);

        const json = await s.navi(['doctor', '-o', 'json']);
        expect(json.code, describeRun(json)).toBe(0);
        const parsed = JSON.parse(json.stdout) as DoctorJson;
        expect(parsed.ok).toBe(true);
        expect(parsed.checks.find((c) => c.name === 'model')).toMatchObject({ ok: true, capabilities: ['completion', 'tools', 'thinking'] });
        expect(parsed.checks.find((c) => c.name === 'ollama')).toMatchObject({ ok: true, version: DEFAULT_FAKE_VERSION });
        expect(parsed.checks.find((c) => c.name === 'ollama')?.warnings).toBeUndefined();
      }, SCENARIO_TIMEOUT_MS);

      it('fails (exit 1) on a model without tools, naming it and the fix', async () => {
        const s = await scenario(backend, { models: MODELS, turns: [] });
        const run = await s.navi(['doctor', '--model', 'llama3.1:8b']);
        expect(run.code, describeRun(run)).toBe(1);
        const model = line(run.stdout, 'model');
        expect(model).toMatch(/^✗ model\s+llama3\.1:8b is pulled, capabilities: completion: llama3\.1:8b does not support tools/);
        expect(model).toContain('pull a tool-capable model such as qwen3:8b (ollama pull qwen3:8b) and set llm.model');
        expect(line(run.stdout, 'ollama')).toMatch(/^✓ ollama/);
        expect(run.stdout).toContain('some checks failed');

        const json = await s.navi(['doctor', '--model', 'llama3.1:8b', '-o', 'json']);
        expect(json.code, describeRun(json)).toBe(1);
        const parsed = JSON.parse(json.stdout) as DoctorJson;
        expect(parsed.ok).toBe(false);
        const check = parsed.checks.find((c) => c.name === 'model');
        expect(check).toMatchObject({ ok: false, capabilities: ['completion'] });
        expect(check?.detail).toContain('does not support tools');
      }, SCENARIO_TIMEOUT_MS);

      it('warns (exit 0) on a model without thinking while llm.think is on, and not once it is off', async () => {
        const s = await scenario(backend, { models: MODELS, turns: [] });
        const run = await s.navi(['doctor', '--model', 'mistral:7b']);
        expect(run.code, describeRun(run)).toBe(0);
        expect(line(run.stdout, 'model')).toMatch(/^✓ model\s+mistral:7b is pulled, capabilities: completion, tools$/);
        expect(run.stdout).toContain('  warning: mistral:7b does not support thinking; navi will run it without thinking');

        const json = await s.navi(['doctor', '--model', 'mistral:7b', '-o', 'json']);
        const parsed = JSON.parse(json.stdout) as DoctorJson;
        expect(parsed.ok).toBe(true);
        expect(parsed.checks.find((c) => c.name === 'model')?.warnings).toEqual([expect.stringContaining('does not support thinking')]);

        fs.writeFileSync(path.join(s.cwd, '.nav-config.json'), JSON.stringify({ llm: { think: false } }));
        const off = await s.navi(['doctor', '--model', 'mistral:7b']);
        expect(off.code, describeRun(off)).toBe(0);
        expect(off.stdout).not.toContain('warning: mistral:7b does not support thinking');
      }, SCENARIO_TIMEOUT_MS);
    });

    describe('doctor: num_ctx', () => {
      it('warns about a num_ctx the user set above the model\'s context length, naming where it came from', async () => {
        const s = await scenario(backend, { models: MODELS, turns: [] });
        fs.writeFileSync(path.join(s.cwd, '.nav-config.json'), JSON.stringify({ llm: { num_ctx: 131072 } }));
        const run = await s.navi(['doctor']);
        expect(run.code, describeRun(run)).toBe(0);
        expect(run.stdout).toContain("  warning: llm.num_ctx 131072 (set in your configuration) exceeds the model's context length 40960");
        expect(run.stdout).toContain('Ollama clamps it, so runs use 40960');
        // What runs really use (budgeted with the model's context, as Ollama loads it).
        expect(line(run.stdout, 'model')).toContain('runs use num_ctx 40960');
      }, SCENARIO_TIMEOUT_MS);
    });

    describe('doctor: Ollama version', () => {
      it('fails (exit 1) on an Ollama older than 0.9.0 with the upgrade advice; the model is still checked', async () => {
        const s = await scenario(backend, { models: MODELS, turns: [], version: '0.8.0' });
        const run = await s.navi(['doctor']);
        expect(run.code, describeRun(run)).toBe(1);
        expect(line(run.stdout, 'ollama')).toMatch(/^✗ ollama\s+version 0\.8\.0 at http:\/\/127\.0\.0\.1:\d+: Ollama 0\.8\.0 is older than 0\.9\.0, the first version with think; upgrade Ollama/);
        expect(line(run.stdout, 'model')).toMatch(/^✓ model/);

        const json = await s.navi(['doctor', '-o', 'json']);
        const parsed = JSON.parse(json.stdout) as DoctorJson;
        expect(parsed.ok).toBe(false);
        expect(parsed.checks.find((c) => c.name === 'ollama')).toMatchObject({ ok: false, version: '0.8.0' });

        // Without think an old server runs navi (it ignores the field): a warning only.
        fs.writeFileSync(path.join(s.cwd, '.nav-config.json'), JSON.stringify({ llm: { think: false } }));
        const off = await s.navi(['doctor']);
        expect(off.code, describeRun(off)).toBe(0);
        expect(off.stdout).toContain('  warning: Ollama 0.8.0 is older than 0.9.0');
      }, SCENARIO_TIMEOUT_MS);

      it.each([
        ['0.0.0', true],
        ['0.9.0-rc0', false],
      ])('version %j passes (warning: %s)', async (version, warns) => {
        const s = await scenario(backend, { models: MODELS, turns: [], version });
        const run = await s.navi(['doctor']);
        expect(run.code, describeRun(run)).toBe(0);
        expect(line(run.stdout, 'ollama')).toMatch(new RegExp(`^✓ ollama\\s+version ${version.replace(/\./g, '\\.')} at`));
        if (warns) expect(run.stdout).toContain(`  warning: cannot tell from version "${version}"`);
        else expect(run.stdout).not.toContain('warning: cannot tell');
      }, SCENARIO_TIMEOUT_MS);

      // Releases before fixes navi relies on (audit D16): passes, with a warning naming the fix.
      it.each<[string, string[]]>([
        ['0.29.3', ['fixed in 0.31.0', 'fixed in 0.32.15']],
        ['0.30.0', ['fixed in 0.30.1', 'fixed in 0.31.0', 'fixed in 0.32.15']],
        ['0.30.11', ['fixed in 0.31.0', 'fixed in 0.32.15']],
        ['0.32.14', ['fixed in 0.32.15']],
        ['0.32.15', []],
        ['0.33.0', []],
      ])('Ollama %s: warnings %j', async (version, fixes) => {
        const s = await scenario(backend, { models: MODELS, turns: [], version });
        const json = await s.navi(['doctor', '-o', 'json']);
        expect(json.code, describeRun(json)).toBe(0);
        const warnings = (JSON.parse(json.stdout) as DoctorJson).checks.find((c) => c.name === 'ollama')?.warnings ?? [];
        expect(warnings.map((w) => /fixed in [\d.]+/.exec(w)?.[0])).toEqual(fixes);
        for (const w of warnings) expect(w).toMatch(new RegExp(`^Ollama ${version.replace(/\./g, '\\.')} .+: upgrade Ollama`));
        if (version === '0.32.14') {
          const text = await s.navi(['doctor']);
          expect(text.stdout).toContain(`  warning: Ollama 0.32.14 wedges the model runner when a parser error happens mid-stream`);
        }
      }, SCENARIO_TIMEOUT_MS);

      it('a think level on an Ollama older than 0.17.7 is a warning; true is not', async () => {
        const s = await scenario(backend, { models: MODELS, turns: [], version: '0.17.6' });
        fs.writeFileSync(path.join(s.cwd, '.nav-config.json'), JSON.stringify({ llm: { think: 'high' } }));
        const run = await s.navi(['doctor']);
        expect(run.code, describeRun(run)).toBe(0);
        expect(run.stdout).toContain('  warning: Ollama 0.17.6 refuses a think level (llm.think "low" | "medium" | "high") on every model but gpt-oss with HTTP 400');
        fs.writeFileSync(path.join(s.cwd, '.nav-config.json'), JSON.stringify({ llm: { think: true } }));
        expect((await s.navi(['doctor'])).stdout).not.toContain('refuses a think level');
      }, SCENARIO_TIMEOUT_MS);
    });

    describe('doctor: OLLAMA_HOST', () => {
      it('a scheme in capitals keeps port 11434, as Ollama reads OLLAMA_HOST (envconfig Host)', async () => {
        const s = await scenario(backend, { models: MODELS, turns: [] });
        // Nothing listens there in the test: the message names the host navi tried.
        const run = await s.navi(['doctor', '-o', 'json'], { host: false, env: { OLLAMA_HOST: 'HTTP://127.0.0.1' } });
        const ollama = (JSON.parse(run.stdout) as DoctorJson).checks.find((c) => c.name === 'ollama');
        expect(ollama?.detail).toContain('http://127.0.0.1:11434');
      }, SCENARIO_TIMEOUT_MS);
    });
  },
);
