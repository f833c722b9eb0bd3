/**
 * `navi doctor`'s `runner` check (issue 17 point 4): what Ollama really loaded for the model,
 * from `/api/ps` (server/routes.go 2271-2303) — the context after the server clamped num_ctx
 * (llm/server.go 111-117), the part of the model that spilled to the CPU, when it unloads.
 */
import { describe, expect, it } from 'vitest';
import { runnerCheck } from '../../src/cli/commands/doctor.js';
import { LlmSchema } from '../../src/config/schema.js';
import { forEachBackend } from '../support/databases.js';
import { SCENARIO_TIMEOUT_MS, describeRun, scenario } from '../scenario/helpers.js';

function line(stdout: string, name: string): string {
  return stdout.split('\n').find((l) => new RegExp(`^[✓✗] ${name}\\b`).test(l)) ?? '';
}

describe('runnerCheck', () => {
  const llm = LlmSchema.parse({ model: 'qwen3:8b' });
  const now = Date.parse('2026-12-03T12:00:00Z');
  it.each([
    [[], /^qwen3:8b is not loaded \(Ollama loads it on the first request/, []],
    [[{ name: 'qwen3:8b', contextLength: 40960, size: 5e9, sizeVram: 5e9, expiresAt: '2026-12-03T12:30:00Z' }], /^qwen3:8b is loaded, context 40960 tokens, 100% GPU, unloads in 30 min$/, []],
    [[{ name: 'other:1b', contextLength: 4096 }], /is not loaded/, []],
    [[{ name: 'qwen3:8b', contextLength: 8192, size: 10e9, sizeVram: 6e9, expiresAt: '2318-08-21T00:00:00Z' }], /context 8192 tokens, 60% GPU \/ 40% CPU, kept loaded$/, [/^4\.0 GB of the model's 10\.0 GB spilled to system memory and runs on the CPU/]],
  ])('%j', (running, detail, warnings) => {
    const r = runnerCheck(running, llm, now);
    expect(r.detail).toMatch(detail);
    expect(r.warnings ?? []).toHaveLength(warnings.length);
    for (const [i, w] of warnings.entries()) expect(r.warnings?.[i]).toMatch(w);
  });
});

forEachBackend(
  (backend) => {
    describe('doctor: runner', () => {
      it('not loaded before the first run; after it, the clamped context and full GPU', async () => {
        const s = await scenario(backend, { models: [{ name: 'qwen3:8b', context_length: 40960 }], turns: [{ content: 'hi' }] });
        const before = await s.navi(['doctor']);
        expect(before.code, describeRun(before)).toBe(0);
        expect(line(before.stdout, 'runner')).toMatch(/^✓ runner\s+qwen3:8b is not loaded/);

        const run = await s.navi(['run', 'hello'], { env: { OLLAMA_NUM_CTX: '131072' } });
        expect(run.code, describeRun(run)).toBe(0);
        const after = await s.navi(['doctor']);
        expect(line(after.stdout, 'runner')).toMatch(/^✓ runner\s+qwen3:8b is loaded, context 40960 tokens, 100% GPU, unloads in 30 min$/);
      }, SCENARIO_TIMEOUT_MS);

      it('warns when the model spilled to the CPU (exit 0)', async () => {
        const s = await scenario(backend, { models: [{ name: 'qwen3:8b', context_length: 40960, size: 9e9, size_vram: 6e9 }], turns: [{ content: 'hi' }] });
        expect((await s.navi(['run', 'hello'])).code).toBe(0);
        const run = await s.navi(['doctor', '-o', 'json']);
        expect(run.code, describeRun(run)).toBe(0);
        const parsed = JSON.parse(run.stdout) as { checks: Array<{ name: string; ok: boolean; detail: string; warnings?: string[] }> };
        const runner = parsed.checks.find((c) => c.name === 'runner');
        expect(runner).toMatchObject({ ok: true });
        expect(runner?.detail).toContain('67% GPU / 33% CPU');
        expect(runner?.warnings?.[0]).toMatch(/^3\.0 GB of the model's 9\.0 GB spilled to system memory and runs on the CPU/);
      }, SCENARIO_TIMEOUT_MS);
    });
  },
);
