/**
 * The runner's small rules, table-tested: activity from events, decisions lines, the resume and
 * takeover rules, the iteration message, git porcelain parsing, and evaluation of an iteration.
 */
import { describe, expect, it } from 'vitest';
import type { AgentEvent, StopReason } from '../../src/agent/events.js';
import { turnEnding } from '../../src/loop/runner-events.js';
import { loopSignalTool } from '../../src/loop/loop-signal-tool.js';
import { pickOption } from '../../src/cli/loop-decisions.js';
import { ActivityCollector, normalizeToolPath, shellExitCode } from '../../src/loop/activity.js';
import { LineDecisionSource, linesReader, parseDecisionFile, parseDecisionLine } from '../../src/loop/decisions.js';
import { evaluateIteration } from '../../src/loop/evaluate.js';
import { emptyEvidence } from '../../src/loop/evidence.js';
import { changedBetween, hasTrackedChanges, parsePorcelainV2, parsePorcelainZ, untrackedPaths } from '../../src/loop/git-probe.js';
import { buildIterationMessage, trailingQuestion } from '../../src/loop/iteration-message.js';
import { STALE_MS, takeoverVerdict } from '../../src/loop/ownership.js';
import { planResume } from '../../src/loop/resume.js';
import { normalizeOutput } from '../../src/loop/state-hash.js';
import type { LoopRunRecord } from '../../src/store/types.js';

const toolCall = (name: string, args: unknown, output = '', ok = true, sub = false): AgentEvent => ({
  type: 'tool_call',
  call_id: 'c',
  name,
  arguments: args,
  ok,
  duration_ms: 1,
  output,
  truncated: false,
  ...(sub ? { is_subagent: true, agent_path: ['default', 'researcher'] } : {}),
});

describe('activity from events', () => {
  it('records reads, writes, test runs with exit codes, signals and the final text', () => {
    const c = new ActivityCollector('/w');
    c.observe(toolCall('read_file', { path: './src/a.ts' }));
    c.observe(toolCall('list_dir', {}));
    c.observe(toolCall('search_files', { pattern: 'x', path: '/w/lib/' }));
    c.observe(toolCall('write_file', { path: 'src/a.ts', content: '' }));
    c.observe(toolCall('edit_file', { path: 'src/missing.ts' }, 'not found', false));
    c.observe(toolCall('shell', { command: 'npm test' }, 'FAIL\n[exit code 1]', false));
    c.observe(toolCall('shell', { command: 'ls' }, 'a\n[exit code 0]'));
    c.observe(toolCall('shell', { command: 'npx vitest run' }, '[timed out after 5 s]', false));
    c.observe(toolCall('loop_signal', { type: 'exit', success: true, reason: 'r' }));
    c.observe(toolCall('loop_signal', { type: 'exit', success: true }, '', true, true));
    c.observe(toolCall('write_file', { path: 'sub.ts' }, '', true, true));
    c.observe({ type: 'stream_end', stop_reason: 'completed', text: 'sub text', iterations: 1, usage: { prompt_tokens: 0, completion_tokens: 0 }, is_subagent: true });
    c.observe({ type: 'stream_end', stop_reason: 'completed', text: 'final', iterations: 3, usage: { prompt_tokens: 0, completion_tokens: 0 } });
    const a = c.result();
    expect(a.filesRead).toEqual(['src/a.ts', '.', 'lib']);
    expect(a.filesWritten).toEqual(['src/a.ts', 'sub.ts']);
    expect(a.testRuns).toEqual([
      { command: 'npm test', exitCode: 1 },
      { command: 'npx vitest run', exitCode: null },
    ]);
    expect(a.toolCalls).toBe(8);
    expect(a.signalArgs).toEqual([{ type: 'exit', success: true, reason: 'r' }]);
    expect(a.finalText).toBe('final');
    expect(a.lastAction).toBe('shell npx vitest run');
  });

  it.each([
    ['ok\n[exit code 0]', 0],
    ['boom\n[exit code 2]\n', 2],
    ['[timed out after 3 s]', null],
    ['[exit code 1] but more', null],
    ['', null],
  ])('shellExitCode(%j) = %s', (out, code) => {
    expect(shellExitCode(out)).toBe(code);
  });

  it.each([
    ['a.ts', 'a.ts'],
    ['./a.ts', 'a.ts'],
    ['dir/', 'dir'],
    ['', '.'],
    ['/w/x/y.ts', 'x/y.ts'],
    ['/w', '.'],
    [42, undefined],
  ])('normalizeToolPath(%j) = %j', (raw, want) => {
    expect(normalizeToolPath('/w', raw)).toBe(want);
  });
});

describe('loop_signal', () => {
  type Ctx = Parameters<typeof loopSignalTool.execute>[1];
  const ctx = (agentPath: string[]): Ctx => ({ cwd: '/w', agentPath }) as Partial<Ctx> as Ctx;
  it('acknowledges for the loop agent and refuses inside a sub-agent (loops never nest)', async () => {
    const main = await loopSignalTool.execute({ type: 'exit', success: true, reason: 'r' }, ctx(['coder']));
    expect(main.ok).toBe(true);
    expect(main.output).toMatch(/runner decides after this iteration/);
    const sub = await loopSignalTool.execute({ type: 'exit', success: true, reason: 'r' }, ctx(['coder', 'researcher']));
    expect(sub).toMatchObject({ ok: false });
    expect(loopSignalTool.schema.safeParse({ type: 'exit', success: 'yes', reason: 'r' }).success).toBe(false);
  });
});

describe('decisions', () => {
  it('parses valid lines and names the line of a bad one', () => {
    expect(parseDecisionLine('{"decision":"adjust","feedback":"x"}', 3, 'f')).toEqual({ decision: 'adjust', feedback: 'x', source: 'decisions_file', line: 3 });
    expect(() => parseDecisionLine('{"decision":"maybe"}', 2, 'f.jsonl')).toThrow(/^f\.jsonl:2: "decision" must be one of/);
    expect(() => parseDecisionLine('{"decision":"abort","extra":1}', 4, 'f')).toThrow(/f:4: unknown key extra/);
    expect(() => parseDecisionLine('continue', 1, 'f')).toThrow(/f:1: not a JSON object/);
    expect(() => parseDecisionFile('{"decision":"continue"}\n\n{"decision":1}\n', 'd')).toThrow(/^d:3:/);
  });

  it('consumes lines in order, checks them against the prompt, and says when they run out', async () => {
    const src = new LineDecisionSource(linesReader(['{"decision":"continue"}', '', '{"decision":"extend"}']), 'd');
    const signal = new AbortController().signal;
    await expect(src.decide({ prompt: 'approval', iteration: 1, question: '?' })).resolves.toMatchObject({ decision: 'continue', line: 1 });
    await expect(src.decide({ prompt: 'max_iterations', iteration: 2, question: '?' })).resolves.toMatchObject({ decision: 'extend', line: 3 });
    await expect(src.decide({ prompt: 'stagnation', iteration: 3, question: '?' })).resolves.toBeNull();
    expect(src.takeWarnings()).toEqual(['d: no more decisions after line 3; following the headless rules from now on']);
    expect(src.takeWarnings()).toEqual([]);
    void signal;
    const bad = new LineDecisionSource(linesReader(['{"decision":"complete"}']), 'd');
    await expect(bad.decide({ prompt: 'stagnation', iteration: 4, question: '?' })).rejects.toThrow(/d:1: "complete" does not answer the stagnation prompt of iteration 4 \(allowed: continue, adjust, abort\)/);
  });

  it.each([
    ['approval', '', 0, 'continue'],
    ['approval', '2', 0, 'adjust'],
    ['stagnation', 'cl', null, 'adjust'],
    ['stagnation', '', null, null],
    ['max_iterations', 'Extend', null, 'extend'],
    ['max_iterations', 'a', null, 'abort'],
    ['max_iterations', '4', null, null],
    ['approval', 'x', 0, null],
  ] as const)('terminal menu %s: %j → %s', (prompt, answer, def, want) => {
    expect(pickOption(prompt, answer, def)).toBe(want);
  });
});

const run = (over: Partial<LoopRunRecord> = {}): LoopRunRecord => ({
  id: 'run_1',
  sessionId: 's',
  taskName: 't',
  task: {},
  config: { owner: { pid: 4242, host: 'here', since: '' } },
  cwd: '/w',
  status: 'incomplete',
  reason: 'max_iterations',
  iteration: 5,
  maxIterations: 5,
  stagnationCount: 0,
  hashHistory: [],
  diversifications: 0,
  promptTokens: 100,
  completionTokens: 10,
  maxTokens: null,
  deadlineAt: null,
  gitHeadAtStart: null,
  startedAt: new Date(0),
  updatedAt: new Date(1_000_000),
  finishedAt: null,
  ...over,
});
const now = 1_000_000 + 5_000;
const me = { pid: 1, host: 'here' };

describe('resume rules', () => {
  it.each([
    ['completed', { status: 'completed' as const, reason: 'gate_passed' }, 0, /ended completed \(gate_passed\) and cannot be resumed/],
    ['aborted', { status: 'aborted' as const, reason: 'user_aborted' }, 0, /ended aborted/],
    ['at max without --extend', {}, 0, /used all 5 of its iterations; resume with more: navi loop --resume run_1 --extend 3/],
    ['tokens spent', { status: 'budget_exhausted' as const, iteration: 1, maxTokens: 100 }, 0, /spent 110 of its 100 tokens/],
    ['deadline passed', { status: 'budget_exhausted' as const, iteration: 1, deadlineAt: new Date(now - 1) }, 0, /passed its deadline/],
    ['live owner on this host', { status: 'running' as const, iteration: 1 }, 0, /still running: it is being run by pid 4242 on here/],
  ])('refuses: %s', (_name, over, extend, message) => {
    expect(() => planResume(run(over), { extend, now, me, isAlive: () => true })).toThrow(message);
  });

  it('extends, raises budgets, keeps the original deadline, and takes over a dead owner', () => {
    const deadline = new Date(now + 60_000);
    expect(planResume(run(), { extend: 2, now, me, isAlive: () => true })).toEqual({ maxIterations: 7, maxTokens: null, deadlineAt: null, note: null });
    expect(planResume(run({ status: 'budget_exhausted', iteration: 1, maxTokens: 100, deadlineAt: deadline }), { extend: 0, maxTokens: 500, now, me, isAlive: () => true })).toMatchObject({ maxTokens: 500, deadlineAt: deadline });
    expect(planResume(run({ status: 'budget_exhausted', iteration: 1, deadlineAt: new Date(now - 1) }), { extend: 0, deadlineMs: 1000, now, me, isAlive: () => true }).deadlineAt).toEqual(new Date(now + 1000));
    const taken = planResume(run({ status: 'running', iteration: 1 }), { extend: 0, now, me, isAlive: () => false });
    expect(taken.note).toMatch(/previous process \(pid 4242 on here\) is gone; taking the run over/);
  });

  it.each([
    ['same host, dead pid', { pid: 9, host: 'here', since: '' }, 1_000, false, true],
    ['same host, live pid, fresh heartbeat', { pid: 9, host: 'here', since: '' }, 1_000, true, false],
    ['same host, live pid, stale heartbeat (pid reused)', { pid: 9, host: 'here', since: '' }, STALE_MS + 1, true, true],
    ['other host, fresh', { pid: 9, host: 'there', since: '' }, 1_000, true, false],
    ['other host, stale', { pid: 9, host: 'there', since: '' }, STALE_MS + 1, true, true],
    ['no owner recorded, fresh', null, 1_000, true, false],
    ['no owner recorded, stale', null, STALE_MS + 1, true, true],
  ])('takeover: %s → %s', (_name, owner, silentMs, alive, ok) => {
    const verdict = takeoverVerdict({ owner, updatedAt: new Date(now - silentMs), me, now, isAlive: () => alive });
    expect(verdict.ok).toBe(ok);
  });
});

describe('iteration message and questions', () => {
  it('carries the task, the iteration, the checks, the previous status and the notes', () => {
    const text = buildIterationMessage({ task: 'Fix it.', iteration: 2, maxIterations: 4, checkNames: ['tests', 'lint'], previousStatus: 'BLOCK', notes: ['note one', 'note two'] });
    expect(text).toMatch(/^LOOP MODE — iteration 2 of 4\.\n\nTask:\nFix it\.\n/);
    expect(text).toContain(`the task's checks ("tests", "lint")`);
    expect(text).toContain('loop_signal');
    expect(text).toContain('Status after the previous iteration (computed by the runner from evidence):\nBLOCK');
    expect(text).toMatch(/From the runner, for this iteration:\n\nnote one\n\nnote two\n$/);
    expect(buildIterationMessage({ task: 'x', iteration: 1, maxIterations: 1, checkNames: [], previousStatus: null, notes: [] })).not.toContain('From the runner');
  });

  it.each([
    ['Which file should I change?', 'Which file should I change?'],
    ['Done.\n\nShall I also update the docs?**\n', 'Shall I also update the docs?**'],
    ['Should I? No. I fixed it.', null],
    ['Any questions?\n<!-- nav-signal:v3:{"type":"exit"} -->', 'Any questions?'],
    ['', null],
  ])('trailingQuestion(%j) = %j', (text, want) => {
    expect(trailingQuestion(text)).toBe(want);
  });
});

describe('git porcelain', () => {
  it('parses -z output with renames and classifies entries', () => {
    const entries = parsePorcelainZ(' M src/a.ts\0R  new.ts\0old.ts\0?? docs/\0?? .agent/\0A  b.ts\0');
    expect(entries).toEqual([
      { code: ' M', path: 'src/a.ts' },
      { code: 'R ', path: 'new.ts' },
      { code: '??', path: 'docs/' },
      { code: '??', path: '.agent/' },
      { code: 'A ', path: 'b.ts' },
    ]);
    expect(untrackedPaths(entries)).toEqual(['docs/']);
    expect(hasTrackedChanges(entries)).toBe(true);
    expect(hasTrackedChanges([{ code: '??', path: 'x' }])).toBe(false);
  });

  it('parses porcelain v2 with the branch header: HEAD, v1-style codes, renames, untracked', () => {
    const head = 'a'.repeat(40);
    const text = [
      `# branch.oid ${head}`,
      '# branch.head main',
      '1 .M N... 100644 100644 100644 abc abc src/a file.ts',
      `2 R. N... 100644 100644 100644 abc abc R100 new.ts`,
      'old.ts',
      'u UU N... 100644 100644 100644 100644 a b c conflict.ts',
      '? docs/',
      '! ignored.log',
      '',
    ].join('\0');
    expect(parsePorcelainV2(text)).toEqual({
      head,
      entries: [
        { code: ' M', path: 'src/a file.ts' },
        { code: 'R ', path: 'new.ts' },
        { code: 'UU', path: 'conflict.ts' },
        { code: '??', path: 'docs/' },
        { code: '!!', path: 'ignored.log' },
      ],
    });
    expect(parsePorcelainV2('# branch.oid (initial)\0# branch.head main\0? a.txt\0').head).toBeNull();
  });

  it('finds files whose dirty state changed between two snapshots', () => {
    const before = new Map([['a', ' M|1:1'], ['b', ' M|2:2'], ['c', '??|3:3']]);
    const after = new Map([['a', ' M|1:1'], ['b', ' M|2:9'], ['d', '??|1:1']]);
    expect(changedBetween(before, after).sort()).toEqual(['b', 'c', 'd']);
  });
});

describe('evaluateIteration', () => {
  const base = { finalText: '', signalArgs: [], iteration: 1, maxIterations: 5, hashHistory: [], previousHash: null, stagnationThreshold: 3, requireExplicitSignal: true };
  const failing = (tail: string) => ({ ...emptyEvidence(), checks: [{ name: 'tests', exitCode: 1, durationMs: 5, outputTail: tail }] });

  it('hashes an empty iteration as navigator does (INIT/{}/[]/null → 9ea082)', () => {
    const ev = evaluateIteration({ ...base, evidence: emptyEvidence() });
    expect(ev.hash).toBe('9ea082');
    expect(ev.phase.phase).toBe('INIT');
    expect(ev.gate.decision).toBe('continue');
  });

  it('a different failure changes the hash (real progress on a red suite is not stagnation); timings do not', () => {
    const a = evaluateIteration({ ...base, evidence: failing('✗ add: expected 5, got -1 (12 ms)') });
    const b = evaluateIteration({ ...base, evidence: failing('✗ add: expected 5, got -1 (48 ms)') });
    const c = evaluateIteration({ ...base, evidence: failing('✗ add: expected 5, got 6 (12 ms)') });
    expect(a.hash).toBe(b.hash);
    expect(a.hash).not.toBe(c.hash);
    expect(a.errorState).not.toBeNull();
  });

  it('node --test output digests the same on every run (TAP durations are not progress)', () => {
    const tap = (a: string, b: string) => `not ok 1 - add\n  ---\n  duration_ms: ${a}\n  error: 'expected 5, got -1'\n  ...\n# fail 1\n# duration_ms ${b}\n`;
    const x = evaluateIteration({ ...base, evidence: failing(tap('2.074703', '143.017756')) });
    const y = evaluateIteration({ ...base, evidence: failing(tap('1.5', '99.1')) });
    expect(x.hash).toBe(y.hash);
    expect(normalizeOutput('{"duration": 12, "elapsed_ms":3}')).toBe('{"duration": <n>, "elapsed_ms":<n>}');
  });

  it('counts consecutive equal hashes for the status block', () => {
    const ev = evaluateIteration({ ...base, evidence: emptyEvidence(), hashHistory: ['abc', '9ea082', '9ea082'], previousHash: '9ea082' });
    expect(ev.consecutive).toBe(3);
    expect(ev.block).toContain('Stagnation: 3/3');
    expect(ev.block).toContain('Previous Hash: 9ea082');
  });
});

describe('turnEnding: the endings a turn forces', () => {
  it.each<[string, string | undefined, string | null]>([
    ['completed', undefined, null],
    ['truncated', 'cut off', null],
    ['context_too_large', 'The conversation no longer fits the model\'s context window (about 9000 tokens; num_ctx 8192). Start a new session, or use a model with a larger context.', 'about 9000 tokens; num_ctx 8192'],
    ['context_too_large', undefined, 'raise llm.num_ctx'],
  ])('%s (%s)', (reason, error, says) => {
    const ending = turnEnding(reason as StopReason, error);
    if (says === null) expect(ending).toBeNull();
    else expect(ending).toMatchObject({ status: 'failed', reason: 'context_too_large', message: expect.stringContaining(says) as string });
  });
});
