/**
 * The loop runner in-process: a real Agent with a scripted model, the shipped profiles, the
 * built-in tools plus `loop_signal`, a real store (PGlite, or PostgreSQL when DATABASE_URL is
 * set) and a real git repository in a temp folder with a failing test and a cheap check.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { Agent } from '../../src/agent/agent.js';
import { agentTools } from '../../src/agent/agent-tools.js';
import type { AgentEvent } from '../../src/agent/events.js';
import { defaultConfig, type LoopModeConfig } from '../../src/config/schema.js';
import type { ChatRequest } from '../../src/llm/types.js';
import { headlessDecisions, type DecisionSource } from '../../src/loop/decisions.js';
import { loopTools } from '../../src/loop/loop-signal-tool.js';
import { runLoop, type LoopOutcome, type LoopRunOptions } from '../../src/loop/runner.js';
import type { Task } from '../../src/loop/task-file.js';
import { loadProfiles } from '../../src/profiles/load.js';
import type { Store } from '../../src/store/types.js';
import { builtinTools } from '../../src/tools/builtin/index.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { ScriptedLlm, type ScriptedTurn } from '../support/scripted-llm.js';

const profiles = loadProfiles();
const registry = new ToolRegistry([...builtinTools(), ...agentTools(), ...loopTools()]);

/** A temp directory removed after the test. */
export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `navi-lr-${prefix}-`));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_DATE: '', GIT_COMMITTER_DATE: '' } });
}

/** The broken source and its fix. */
export const BROKEN = 'export function add(a, b) {\n  return a - b;\n}\n';
export const FIXED = 'export function add(a, b) {\n  return a + b;\n}\n';

/** A working directory with `math.js` (broken), committed when `repo` (default true). */
export function workdir(opts: { repo?: boolean } = {}): string {
  const dir = tempDir('wd');
  fs.writeFileSync(path.join(dir, 'math.js'), BROKEN);
  fs.writeFileSync(path.join(dir, 'README.md'), '# math\n');
  if (opts.repo !== false) {
    git(dir, 'init', '-q');
    git(dir, 'config', 'user.email', 'loop@test');
    git(dir, 'config', 'user.name', 'loop test');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-qm', 'init');
  }
  return dir;
}

/** A task whose check passes once math.js adds (a grep: fast, no test runner needed). */
export function task(over: Partial<Task> = {}): Task {
  return {
    name: 'fix-add',
    prompt: 'Make add() add.',
    source: 'test',
    loopMode: true,
    checks: [{ name: 'tests', run: "grep -q 'a + b' math.js", timeoutS: 10 }],
    ...over,
  };
}

export function loopConfig(over: Partial<LoopModeConfig> = {}): LoopModeConfig {
  return { ...defaultConfig().loop_mode, ...over };
}

/** Model calls that make one iteration: each turn; the last should answer without tools. */
export type IterationScript = ScriptedTurn[];

/** Tool-call shorthand. */
export function call(name: string, args: Record<string, unknown>): ScriptedTurn {
  return { toolCalls: [{ name, arguments: args }] };
}

export const signalExit = (reason = 'done and verified'): ScriptedTurn => call('loop_signal', { type: 'exit', success: true, reason });

/** An iteration that fixes math.js, checks it, commits and signals. */
export function fixAndCommit(): IterationScript {
  return [
    call('read_file', { path: 'math.js' }),
    call('write_file', { path: 'math.js', content: FIXED }),
    call('shell', { command: "grep -q 'a + b' math.js && git commit -qam 'fix add'" }),
    signalExit('add fixed and committed; the check passes'),
    { content: 'Fixed add().' },
  ];
}

/** An iteration that only reads math.js (no progress). */
export function readOnly(text = 'Still looking.'): IterationScript {
  return [call('read_file', { path: 'math.js' }), { content: text }];
}

export interface Harness {
  llm: ScriptedLlm;
  events: AgentEvent[];
  outcome: LoopOutcome;
  /** The user message (iteration message) of each iteration, in order. */
  iterationMessages(): string[];
}

export interface RunOptions {
  store: Store;
  cwd: string;
  /** Iterations, each a list of model turns; after them the model answers "done.". */
  script: IterationScript[] | ((req: ChatRequest, index: number) => ScriptedTurn);
  loop?: Partial<LoopModeConfig>;
  task?: Partial<Task>;
  decisions?: DecisionSource;
  signal?: AbortSignal;
  resume?: LoopRunOptions['resume'];
  maxTokens?: number | null;
  deadlineAt?: Date | null;
  iterationTimeoutMs?: number;
  /** Stop consuming after this event (to simulate a crash): returns what was seen. */
  crashAfter?: (ev: AgentEvent) => boolean;
}

/** Runs the loop to its end and collects everything. */
export async function runHarness(o: RunOptions): Promise<Harness> {
  const turns = typeof o.script === 'function' ? o.script : o.script.flat();
  const llm = new ScriptedLlm(turns);
  const agent = new Agent({ llm, store: Promise.resolve(o.store), tools: registry, profiles });
  const events: AgentEvent[] = [];
  const gen = runLoop(
    {
      task: task(o.task),
      loop: loopConfig(o.loop),
      profileId: 'default',
      turn: {
        model: 'scripted',
        cwd: o.cwd,
        numCtx: 32768,
        think: false,
        keepAlive: '30m',
        interactive: false,
        shell: { allow: [], deny: [], timeoutS: 30, maxOutputBytes: 65536 },
        redact: (s) => s,
      },
      signal: o.signal ?? new AbortController().signal,
      maxTokens: o.maxTokens ?? null,
      deadlineAt: o.deadlineAt ?? null,
      iterationTimeoutMs: o.iterationTimeoutMs ?? 60_000,
      decisions: o.decisions ?? headlessDecisions,
      owner: { pid: process.pid, host: os.hostname(), since: new Date().toISOString() },
      ...(o.resume ? { resume: o.resume } : {}),
    },
    { agent, store: o.store },
  );
  let outcome: LoopOutcome | undefined;
  for (;;) {
    const step = await gen.next();
    if (step.done) {
      outcome = step.value;
      break;
    }
    events.push(step.value);
    if (o.crashAfter?.(step.value)) {
      await gen.return(undefined as never).catch(() => undefined);
      break;
    }
  }
  return {
    llm,
    events,
    outcome: outcome as LoopOutcome,
    iterationMessages: () =>
      llm.requests
        // The newest iteration message (a trailing user message with reminders may follow it).
        .map((r) => [...r.messages].reverse().find((m) => m.role === 'user' && m.content.startsWith('LOOP MODE'))?.content ?? '')
        .filter((c, i, all) => c.startsWith('LOOP MODE') && all.indexOf(c) === i),
  };
}

/** Events of one type. */
export function ofType<T extends AgentEvent['type']>(events: readonly AgentEvent[], type: T): Array<Extract<AgentEvent, { type: T }>> {
  return events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);
}

/** Marker files written in `cwd`. */
export function markers(cwd: string): string[] {
  try {
    return fs.readdirSync(path.join(cwd, '.agent', '.context-markers')).sort();
  } catch {
    return [];
  }
}
