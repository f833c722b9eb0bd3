import { describe, expect, it, vi } from 'vitest';
import { runPlanning, type PlanningInput, type PlanningPhase } from '../../src/agent/planning/plan-runner.js';
import { PlanningError } from '../../src/agent/planning/planning-error.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { ScriptedLlm, type ScriptedTurn } from '../support/scripted-llm.js';

const TOOLS = ['read_file', 'edit_file', 'shell', 'search_files', 'spawn_agent'];
const TASK = 'Make `navi export` accept --json.';

function analysis(complexity: string, extra = ''): string {
  return `TASK: Add a --json flag to navi export\nGOAL: navi export --json prints JSON\nUNKNOWNS:\n- where formats are chosen\nCOMPLEXITY: ${complexity}\nSUBTASKS:\n- find formatter\n- add flag\n${extra}`;
}

function steps(count: number): string {
  const markers = ['TOOL: search_files', 'TOOL: read_file', 'TOOL: edit_file', 'AGENT: researcher', 'TOOL: shell', 'SELF'];
  return Array.from({ length: count }, (_, i) => `${i + 1}. Action ${i + 1} ${markers[i % markers.length]}`).join('\n');
}

const plan = (count: number): string => `MILESTONES:\n- Flag parsed\n- JSON printed\nSTEPS:\n${steps(count)}`;

function setup(turns: ScriptedTurn[], over: Partial<PlanningInput> = {}) {
  const llm = new ScriptedLlm(turns);
  const statuses: [PlanningPhase, string][] = [];
  const conversation: ChatMessage[] = [
    { role: 'system', content: 'You are navi.' },
    { role: 'user', content: TASK },
    { role: 'assistant', content: '', tool_calls: [{ name: 'plan', arguments: {} }] },
  ];
  const input: PlanningInput = {
    llm,
    model: 'qwen3:8b',
    numCtx: 16384,
    signal: new AbortController().signal,
    conversation,
    task: TASK,
    tools: TOOLS,
    profiles: ['researcher'],
    isSubagent: false,
    onStatus: (phase, message) => statuses.push([phase, message]),
    ...over,
  };
  return { llm, statuses, run: () => runPlanning(input) };
}

describe('runPlanning', () => {
  it('plans a simple task in two non-streaming think=false calls', async () => {
    const { llm, statuses, run } = setup([{ content: analysis('simple') }, { content: plan(2) }]);
    const out = await run();

    expect(llm.requests).toHaveLength(2);
    for (const req of llm.requests) {
      expect(req).toMatchObject({ model: 'qwen3:8b', think: false, numCtx: 16384 });
      expect(req.format).toBeUndefined();
      expect(req.tools).toBeUndefined();
    }
    const [phase1, phase3] = llm.requests;
    expect(phase1?.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(phase1?.messages[0]?.content).toContain('COMPLEXITY: simple|medium|complex');
    expect(phase1?.messages[0]?.content).not.toContain('DIRECT');
    expect(phase1?.messages[1]?.content).toMatch(/^ORIGINAL TASK:\nMake `navi export` accept --json\./);
    expect(phase1?.messages[1]?.content).not.toContain('You are navi.');
    expect(phase3?.messages[1]?.content).toContain('TASK: Add a --json flag to navi export');
    expect(phase3?.messages[1]?.content).toContain('COMPLEXITY: simple (write 1-3 steps)');
    expect(phase3?.messages[1]?.content).toContain(`TOOLS: ${TOOLS.join(', ')}`);
    expect(phase3?.messages[1]?.content).toContain('AGENT PROFILES: researcher');

    expect(out).toMatchObject({
      direct: false,
      complexity: 'simple',
      milestones: ['Flag parsed', 'JSON printed'],
      todoItems: ['Action 1', 'Action 2'],
      followUp: 'Plan ready. Proceed with step 1.',
      warnings: [],
      usage: { calls: 2 },
    });
    expect(out.planText).toBe(
      'Plan (complexity: simple)\nGoal: navi export --json prints JSON\nMilestones: Flag parsed; JSON printed\n1. Action 1 [TOOL: search_files]\n2. Action 2 [TOOL: read_file]',
    );
    expect(out.debug).toMatchObject({ phase1Raw: analysis('simple'), phase3Raw: plan(2), repaired: false, isReplan: false });
    expect(out.debug.requestBytes.analysis).toBeGreaterThan(0);
    expect(out.debug.requestBytes.execution_plan).toBeGreaterThan(0);
    expect(statuses.map(([phase]) => phase)).toEqual(['analysis', 'execution_plan', 'done']);
    expect(statuses.at(-1)?.[1]).toBe('Plan ready: 2 steps (complexity: simple)');
  });

  it('plans a medium task with every executor kind', async () => {
    const { run } = setup([{ content: analysis('medium') }, { content: plan(6) }]);
    const out = await run();
    expect(out.complexity).toBe('medium');
    expect(out.steps.map((s) => s.executor.kind)).toEqual(['tool', 'tool', 'tool', 'agent', 'tool', 'self']);
    expect(out.planText).toContain('4. Action 4 [AGENT: researcher]');
    expect(out.planText).toContain('6. Action 6 [SELF]');
    expect(out.followUp).toBe('Plan ready. Proceed with step 1.');
  });

  it('asks the user to confirm a complex plan', async () => {
    const { llm, run } = setup([{ content: analysis('complex') }, { content: plan(10) }]);
    const out = await run();
    expect(llm.requests[1]?.messages[1]?.content).toContain('COMPLEXITY: complex (write 8-20 steps)');
    expect(out.steps).toHaveLength(10);
    expect(out.followUp).toBe('Plan ready (complex). Present the plan to the user briefly and wait for their confirmation before executing.');
  });

  it('lets a sub-agent skip planning with DIRECT', async () => {
    const { llm, statuses, run } = setup([{ content: '<think>one read</think>\nDIRECT' }], { isSubagent: true });
    const out = await run();
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]?.messages[0]?.content).toContain('answer with the single word DIRECT');
    expect(out).toMatchObject({ direct: true, steps: [], todoItems: [], planText: '', followUp: '', usage: { calls: 1 } });
    expect(statuses.map(([phase]) => phase)).toEqual(['analysis', 'done']);
  });

  it('tells a sub-agent to execute without confirmation, even for a complex plan', async () => {
    const { run } = setup([{ content: analysis('complex') }, { content: plan(8) }], { isSubagent: true });
    const out = await run();
    expect(out.direct).toBe(false);
    expect(out.followUp).toBe('Plan is ready. Execute it now.');
  });

  it('plans anyway when a top-level agent answers DIRECT', async () => {
    const { llm, run } = setup([{ content: 'DIRECT' }, { content: plan(2) }]);
    const out = await run();
    expect(llm.requests).toHaveLength(2);
    expect(out.direct).toBe(false);
    expect(out.steps).toHaveLength(2);
    expect(llm.requests[1]?.messages[1]?.content).toContain(`TASK: ${TASK}`);
    expect(out.debug.notes).toContain('the model answered DIRECT; ignored (offered to sub-agents only)');
  });

  it('repairs a malformed plan once', async () => {
    const bad = 'I will first read the files, then edit them, then run the tests.';
    const { llm, statuses, run } = setup([{ content: analysis('simple') }, { content: bad }, { content: plan(3) }]);
    const out = await run();
    expect(llm.requests).toHaveLength(3);
    expect(llm.requests.every((r) => r.think === false)).toBe(true);
    const repair = llm.requests[2]?.messages ?? [];
    expect(repair.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(repair[2]?.content).toBe(bad);
    expect(repair[3]?.content).toContain('- no numbered steps found');
    expect(out.steps).toHaveLength(3);
    expect(out.debug).toMatchObject({ repaired: true, phase3Raw: bad, repairRaw: plan(3) });
    expect(out.debug.requestBytes.repair).toBeGreaterThan(out.debug.requestBytes.execution_plan ?? 0);
    expect(statuses.map(([phase]) => phase)).toEqual(['analysis', 'execution_plan', 'execution_plan', 'done']);
  });

  it('throws a one-line PlanningError when the repair is malformed too', async () => {
    const { llm, run } = setup([{ content: analysis('medium') }, { content: 'no plan here' }, { content: 'MILESTONES:\n- still none' }]);
    const err = await run().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlanningError);
    expect((err as PlanningError).message).toMatch(/^plan: the model's execution plan was unreadable after one repair attempt: no numbered steps found/);
    expect((err as PlanningError).message).not.toContain('\n');
    expect((err as PlanningError).problems).toHaveLength(1);
    expect(llm.requests).toHaveLength(3);
  });

  it('truncates to 20 steps with a warning when the repair is still too long', async () => {
    const { run } = setup([{ content: analysis('complex') }, { content: plan(25) }, { content: plan(22) }]);
    const out = await run();
    expect(out.steps).toHaveLength(20);
    expect(out.todoItems).toHaveLength(20);
    expect(out.warnings).toEqual([{ code: 'plan_truncated', message: 'plan: the model wrote 22 steps; kept the first 20' }]);
  });

  it('packs the re-plan context into Phase 1 and keeps done steps out of Phase 3', async () => {
    const { llm, statuses, run } = setup([{ content: analysis('medium') }, { content: plan(5) }], {
      replan: {
        reason: 'the export module moved to src/io',
        updatedGoal: 'JSON and CSV export',
        todo: [
          { id: 1, text: 'Find the formatter', status: 'done' },
          { id: 2, text: 'Add the flag', status: 'in_progress' },
          { id: 3, text: 'Write a test', status: 'pending' },
        ],
        scratchpad: [
          { key: 'layout', kind: 'finding', value: 'formatters live in src/io/format.ts' },
          { key: 'build', kind: 'error', value: 'tsc: Cannot find module ./export.js' },
          { key: 'mood', kind: 'note', value: 'PRIVATE NOTE' },
        ],
      },
    });
    const out = await run();
    const user = llm.requests[0]?.messages[1]?.content ?? '';
    expect(user).toMatch(/^ORIGINAL TASK:/);
    expect(user).toContain('REVISION:');
    expect(user).toContain('REASON: the export module moved to src/io');
    expect(user).toContain('UPDATED GOAL: JSON and CSV export');
    expect(user).toContain('1. [done] Find the formatter\n2. [in_progress] Add the flag\n3. [pending] Write a test');
    expect(user).toContain('- [finding] layout: formatters live in src/io/format.ts');
    expect(user).toContain('- [error] build: tsc: Cannot find module ./export.js');
    expect(user).not.toContain('PRIVATE NOTE');
    expect(llm.requests[1]?.messages[1]?.content).toContain('ALREADY DONE (do not plan again): Find the formatter');
    expect(out.planText).toContain('Goal: JSON and CSV export');
    expect(out.debug.isReplan).toBe(true);
    expect(statuses[0]).toEqual(['analysis', 'Re-planning: the export module moved to src/io']);
  });

  it('says "(unchanged)" and "(none)" for a re-plan without a goal or findings', async () => {
    const { llm, run } = setup([{ content: analysis('simple') }, { content: plan(1) }], {
      replan: { reason: 'tests failed', todo: [], scratchpad: [] },
    });
    await run();
    const user = llm.requests[0]?.messages[1]?.content ?? '';
    expect(user).toContain('UPDATED GOAL: (unchanged)\nCURRENT TODO:\n(empty)\nFINDINGS AND ERRORS:\n(none)');
  });

  it('windows a 60k-char conversation to ~20k chars with the task pinned', async () => {
    const conversation: ChatMessage[] = [{ role: 'user', content: TASK }];
    for (let i = 0; i < 200; i++) conversation.push({ role: 'assistant', content: `step ${i} ${'y'.repeat(300)}` });
    const { llm, run } = setup([{ content: analysis('simple') }, { content: plan(1) }], { conversation });
    await run();
    const user = llm.requests[0]?.messages[1]?.content ?? '';
    expect(user.length).toBeLessThanOrEqual(20_000);
    expect(user.startsWith(`ORIGINAL TASK:\n${TASK}`)).toBe(true);
    expect(user).toContain('step 199');
    expect(user).not.toContain('step 0 ');
  });

  it('plans from the task with a warning when the analysis is unreadable', async () => {
    const { llm, run } = setup([{ content: 'Sure, I can help with that!' }, { content: plan(6) }]);
    const out = await run();
    expect(out.complexity).toBe('medium');
    expect(out.warnings).toEqual([
      { code: 'plan_analysis_unreadable', message: 'plan: the task analysis was unreadable; planned from the task statement as medium complexity' },
    ]);
    expect(llm.requests[1]?.messages[1]?.content).toContain(`TASK: ${TASK}`);
  });

  it('offers no AGENT profiles without spawn_agent, and AGENT steps then run as SELF', async () => {
    const { llm, run } = setup([{ content: analysis('medium') }, { content: plan(5) }], { tools: ['read_file', 'edit_file', 'shell', 'search_files'] });
    const out = await run();
    expect(llm.requests[1]?.messages[1]?.content).toContain('AGENT PROFILES: none');
    expect(out.steps[3]?.executor).toEqual({ kind: 'self' });
    expect(out.debug.notes).toContain('step 4: unknown profile researcher; treated as SELF');
  });

  it('notes a plan whose length does not match its complexity', async () => {
    const { run } = setup([{ content: analysis('simple') }, { content: plan(5) }]);
    const out = await run();
    expect(out.debug.notes).toContain('5 steps for a simple task (asked for 1-3)');
  });

  it('makes no call once the signal has fired', async () => {
    const controller = new AbortController();
    controller.abort();
    const { llm, run } = setup([{ content: analysis('simple') }], { signal: controller.signal });
    await expect(run()).rejects.toMatchObject({ name: 'AbortError' });
    expect(llm.requests).toHaveLength(0);
  });

  it('stops a hanging planner call when the signal fires', async () => {
    const controller = new AbortController();
    const { llm, run } = setup([{ hang: true }], { signal: controller.signal });
    const pending = run();
    // Aborted while the planner call hangs.
    await vi.waitFor(() => expect(llm.requests).toHaveLength(1), { timeout: 20_000 });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});
