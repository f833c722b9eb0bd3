/**
 * Prefix reuse by the rule of SPEC §8 and issue 17, on each renderer the fake has: between two
 * consecutive requests of one conversation, request N's WHOLE rendered prompt, less its last 4
 * tokens (the checkpoint llama-server makes near a prompt's end; audit D6), is a prefix of N+1's
 * (test/support/prefix-rule.ts). The built CLI against the fake, one model per renderer: the
 * qwen3 Go template, the qwen3.5 Go renderer and GLM-4.7's, which keeps every turn's thinking.
 * Runs: the default profile's tool loop with thinking, a sub-agent, a 10-iteration `navi loop` in
 * a real git repository, and a session continued with `-c` (the pair across the two runs
 * included: the model is still loaded and holds the first run's last prompt). Every consecutive
 * pair must pass, and SPEC §8's older rule (N without its last message) as well.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loopRepo } from '../loop-scenario/helpers.js';
import { forEachBackend } from '../support/databases.js';
import type { FakeModel, FakeScript, FakeTurn } from '../support/fake-ollama.js';
import { conversations, newTurnExcused, prefixRuleBreaks } from '../support/prefix-rule.js';
import { prefixBreaks, rendererFor, type RendererName } from '../support/render-prompt.js';
import { LONG_SCENARIO_TIMEOUT_MS, SCENARIO_TIMEOUT_MS, describeRun, scenario, type Scenario } from './helpers.js';

/** One model per renderer (server/images.go: a model with a Go renderer names it in its Modelfile). */
const MODELS: Array<FakeModel & { renderer: RendererName }> = [
  { name: 'qwen3:8b', context_length: 40960, renderer: 'qwen3' },
  { name: 'qwen3.5:9b', context_length: 262144, renderer: 'qwen3.5' },
  { name: 'glm-4.7-flash:latest', context_length: 202752, renderer: 'glm-4.7' },
];

type Body = Record<string, unknown>;

/** Both rules on every conversation of `bodies`; `label` says which run. */
function expectPrefixReuse(bodies: Body[], label: string): void {
  for (const group of conversations(bodies)) {
    const messages = (group[0]?.messages ?? []) as Array<{ role?: unknown; content?: unknown }>;
    const content = messages.find((m) => m.role === 'user')?.content;
    const task = typeof content === 'string' ? content : '';
    const name = `${label}, conversation "${task.replace(/\s+/gu, ' ').slice(0, 50)}" (${group.length} requests)`;
    // Both rules excuse what the template itself re-renders at a new user turn (SPEC §8), and only
    // when everything sent before is repeated unchanged (newTurnExcused).
    const older = group.slice(1).flatMap((next, k) => {
      const prev = group[k] ?? {};
      return newTurnExcused(prev, next) ? [] : prefixBreaks([prev, next]).map((b) => b.replace('request 0 → 1', `request ${k} → ${k + 1}`));
    });
    expect.soft(older, `${name}: SPEC §8's older rule (N without its last message)`).toEqual([]);
    expect.soft(prefixRuleBreaks(group, { label: name }), `${name}: N's whole prompt less its last 4 tokens`).toEqual([]);
  }
}

const bodiesOf = (s: Scenario): Body[] => s.chats().map((c) => c.body ?? {});

forEachBackend(
  (backend) => {
    describe.each(MODELS)('prefix reuse on $renderer ($name)', (model) => {
      const models = [{ name: model.name, context_length: model.context_length }];
      const play = (turns: FakeTurn[]): FakeScript => ({ models, turns, on_exhausted: 'error' });

      it('the fake names the renderer it renders with', async () => {
        const s = await scenario(backend, play([]));
        const show = (await (await fetch(`${s.fake.url}/api/show`, { method: 'POST', body: JSON.stringify({ model: model.name }) })).json()) as { modelfile: string };
        expect(rendererFor(model.name)).toBe(model.renderer);
        expect(show.modelfile).toBe(model.renderer === 'qwen3' ? `FROM ${model.name}` : `FROM ${model.name}\nRENDERER ${model.renderer}`);
      });

      it('the default profile: a tool loop with thinking and several calls', async () => {
        const s = await scenario(
          backend,
          play([
            { thinking: 'Write both files first.', tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'alpha\n' } }, { name: 'write_file', arguments: { path: 'b.txt', content: 'beta\n' } }] },
            { thinking: 'Now read them back.', tool_calls: [{ name: 'read_file', arguments: { path: 'a.txt' } }, { name: 'read_file', arguments: { path: 'b.txt' } }] },
            { thinking: 'And list the directory.', tool_calls: [{ name: 'list_dir', arguments: {} }] },
            { thinking: 'Search for alpha.', tool_calls: [{ name: 'search_files', arguments: { pattern: 'alpha' } }] },
            { thinking: 'All checked.', content: 'a.txt holds alpha, b.txt holds beta.' },
          ]),
        );
        const run = await s.navi(['run', '-o', 'json', '--model', model.name, 'write alpha to a.txt and beta to b.txt, read them, list, search']);
        expect(run.code, describeRun(run)).toBe(0);
        expect(s.chats()).toHaveLength(5);
        expectPrefixReuse(bodiesOf(s), 'default profile');
      }, SCENARIO_TIMEOUT_MS);

      it('a sub-agent (spawn_agent): the parent and the child each keep their prompt', async () => {
        const s = await scenario(
          backend,
          play([
            { thinking: 'Delegate the look.', tool_calls: [{ name: 'spawn_agent', arguments: { task: 'List the files here and report them', profile_id: 'researcher' } }] },
            // The sub-agent: two calls of its own, then its answer.
            { thinking: 'Sub: list.', tool_calls: [{ name: 'list_dir', arguments: {} }] },
            { thinking: 'Sub: read one.', tool_calls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
            { thinking: 'Sub: done.', content: 'notes.txt is there; it says hello.' },
            // The parent again.
            { thinking: 'Check its report.', tool_calls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
            { thinking: 'Done.', content: 'The helper found notes.txt (hello).' },
          ]),
        );
        fs.writeFileSync(path.join(s.cwd, 'notes.txt'), 'hello\n');
        const run = await s.navi(['run', '-o', 'json', '--model', model.name, 'Have a helper list the files, then check its report']);
        expect(run.code, describeRun(run)).toBe(0);
        const groups = conversations(bodiesOf(s));
        expect(groups.map((g) => g.length)).toEqual([3, 3]);
        expectPrefixReuse(bodiesOf(s), 'sub-agent');
      }, SCENARIO_TIMEOUT_MS);

      it('a 10-iteration navi loop: one conversation across the iterations', async () => {
        const iteration = (n: number): FakeTurn[] => [
          { thinking: `Iteration ${n}: write.`, tool_calls: [{ name: 'write_file', arguments: { path: `n${n}.txt`, content: `${n}\n` } }] },
          { thinking: `Iteration ${n}: check.`, tool_calls: [{ name: 'read_file', arguments: { path: `n${n}.txt` } }, { name: 'list_dir', arguments: {} }] },
          { thinking: `Iteration ${n}: report.`, content: `Wrote n${n}.txt.` },
        ];
        const s = await scenario(backend, play(Array.from({ length: 10 }, (_, i) => iteration(i + 1)).flat()));
        loopRepo(s.cwd, { loop: '{ max_iterations: 10, stagnation_threshold: 5 }' });
        const run = await s.navi(['loop', 'task.yaml', '-o', 'json', '--model', model.name], { timeoutMs: LONG_SCENARIO_TIMEOUT_MS });
        expect(run.code, describeRun(run)).toBe(3);
        expect(JSON.parse(run.stdout)).toMatchObject({ reason: 'max_iterations', iterations: 10 });
        expect(s.chats()).toHaveLength(30);
        expect(conversations(bodiesOf(s)).map((g) => g.length)).toEqual([30]);
        expectPrefixReuse(bodiesOf(s), '10-iteration loop');
      }, LONG_SCENARIO_TIMEOUT_MS);

      it('a session continued with -c: the second run keeps the first run\'s last prompt', async () => {
        const s = await scenario(
          backend,
          play([
            { thinking: 'Write it.', tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'alpha\n' } }] },
            { thinking: 'Read it back.', tool_calls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] },
            { thinking: 'Written and checked.', content: 'a.txt holds alpha.' },
            // The continued session.
            { thinking: 'Append to it.', tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'alpha\nbeta\n' } }] },
            { thinking: 'Read it again.', tool_calls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] },
            { thinking: 'Both lines there.', content: 'a.txt now holds alpha and beta.' },
          ]),
        );
        const first = await s.navi(['run', '-o', 'json', '--model', model.name, 'write alpha to a.txt and check it']);
        expect(first.code, describeRun(first)).toBe(0);
        const second = await s.navi(['run', '-c', '-o', 'json', '--model', model.name, 'now add a line beta and check again']);
        expect(second.code, describeRun(second)).toBe(0);
        expect(s.chats()).toHaveLength(6);
        expect(conversations(bodiesOf(s)).map((g) => g.length)).toEqual([6]);
        expectPrefixReuse(bodiesOf(s), '-c continued session');
      }, SCENARIO_TIMEOUT_MS);
    });
  },
);
