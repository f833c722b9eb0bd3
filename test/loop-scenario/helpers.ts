/**
 * Loop scenarios: the built CLI against the fake Ollama in a real git repository with a failing
 * `node --test` test and a task file whose check runs it. Model scripts are written per
 * iteration: each is a list of fake turns ending with a plain answer.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { JsonObject, NaviResult } from '../support/cli.js';
import type { FakeScript, FakeTurn } from '../support/fake-ollama.js';
import { describeRun, expectValidStream } from '../scenario/helpers.js';

export { describeRun, eventsOf, expectValidStream, resultOf, scenario, type Scenario } from '../scenario/helpers.js';

export const BROKEN = 'export function add(a, b) {\n  return a - b;\n}\n';
export const FIXED = 'export function add(a, b) {\n  return a + b;\n}\n';
const TEST = "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { add } from './math.js';\n\ntest('add adds', () => {\n  assert.equal(add(2, 3), 5);\n});\n";

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' });
}

/** Task file keys beyond the defaults (YAML flow text per key). */
export interface RepoOptions {
  /** `loop:` block as YAML flow mapping, e.g. `{ max_iterations: 3 }`. */
  loop?: string;
  prompt?: string;
  /** Extra task-file lines. */
  extra?: string;
}

/**
 * Makes `cwd` a git repository with math.js (broken), math.test.js (node --test), and
 * `task.yaml` (check `tests: node --test`), all committed.
 */
export function loopRepo(cwd: string, opts: RepoOptions = {}): void {
  const task = [
    'name: fix-add',
    `prompt: ${JSON.stringify(opts.prompt ?? 'Make the failing test pass by fixing math.js.')}`,
    ...(opts.loop !== undefined ? [`loop: ${opts.loop}`] : []),
    'checks:',
    '  - { name: tests, run: "node --test", timeout_s: 60 }',
    ...(opts.extra !== undefined ? [opts.extra] : []),
  ].join('\n');
  const files: Record<string, string> = {
    'package.json': '{ "type": "module", "private": true }\n',
    'math.js': BROKEN,
    'math.test.js': TEST,
    'task.yaml': `${task}\n`,
  };
  for (const [rel, content] of Object.entries(files)) fs.writeFileSync(path.join(cwd, rel), content);
  git(cwd, 'init', '-q');
  git(cwd, 'config', 'user.email', 'loop@test');
  git(cwd, 'config', 'user.name', 'Loop Test');
  git(cwd, 'add', '-A');
  git(cwd, 'commit', '-qm', 'init: add() is broken');
}

export const tc = (name: string, args: Record<string, unknown>): FakeTurn => ({ tool_calls: [{ name, arguments: args }] });
export const say = (content: string): FakeTurn => ({ content });

/** The iteration of a model that fixes the bug, runs the tests, commits and signals. */
export function fixIteration(): FakeTurn[] {
  return [
    tc('read_file', { path: 'math.js' }),
    tc('shell', { command: 'node --test' }),
    tc('write_file', { path: 'math.js', content: FIXED }),
    tc('shell', { command: "node --test && git commit -qam 'Fix add()'" }),
    tc('loop_signal', { type: 'exit', success: true, reason: 'add() fixed; node --test passes; committed' }),
    say('Fixed add(): it subtracted instead of adding. Tests pass and the fix is committed.'),
  ];
}

/** An iteration that only looks at the code (the same state every time). */
export function lookIteration(text = 'I looked at math.js.'): FakeTurn[] {
  return [tc('read_file', { path: 'math.js' }), say(text)];
}

/** A script of iterations; running out is an error (a loop must not ask for more than scripted). */
export function script(...iterations: FakeTurn[][]): FakeScript {
  return { turns: iterations.flat(), on_exhausted: 'error' };
}

/** Marker files in `cwd`. */
export function markerFiles(cwd: string): string[] {
  try {
    return fs.readdirSync(path.join(cwd, '.agent', '.context-markers')).sort();
  } catch {
    return [];
  }
}

/** Stream-json checks plus the loop's envelope: run_id on every event, loop_iteration on iteration events. */
export function expectLoopStream(run: NaviResult): JsonObject[] {
  const events = expectValidStream(run);
  const runIds = new Set(events.map((e) => e.run_id));
  expect(runIds.size, 'one run id on every event').toBe(1);
  expect([...runIds][0]).toMatch(/^run_/);
  for (const e of events) {
    if (['iteration_started', 'iteration_status', 'exit_gate'].includes(String(e.type))) {
      expect(e.iteration, `${String(e.type)} has its iteration`).toBeTypeOf('number');
      expect(e.loop_iteration).toBe(e.iteration);
    }
  }
  return events;
}

/** The last user message of each `/api/chat` request that starts an iteration, in order. */
export function iterationMessages(chats: ReadonlyArray<{ body?: Record<string, unknown> | undefined }>): string[] {
  const out: string[] = [];
  for (const r of chats) {
    const msgs = (r.body?.messages ?? []) as Array<{ role?: string; content?: string }>;
    // The newest iteration message (a trailing user message with reminders may follow it).
    const last = [...msgs].reverse().find((m) => m.role === 'user' && m.content?.startsWith('LOOP MODE') === true)?.content ?? '';
    if (last.startsWith('LOOP MODE') && !out.includes(last)) out.push(last);
  }
  return out;
}

/** A result's exit code with the run printed on failure. */
export function expectExit(run: NaviResult, code: number): void {
  expect(run.code, describeRun(run)).toBe(code);
}
