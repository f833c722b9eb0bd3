/**
 * The demo's project and its scripted model, shared by `npm run demo` (replays
 * `demo/session.jsonl`) and `scripts/record-demo.ts` (records it against the fake Ollama).
 * The project is `demo/project/` copied into a fresh git repository, committed with fixed
 * names and dates, so a replay sees exactly the files, tool output and git state of the
 * recording.
 */
import { execFileSync } from 'node:child_process';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FakeScript, FakeTurn } from '../test/support/fake-ollama.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const RECORDING = join(ROOT, 'demo', 'session.jsonl');

/** Fixed identity and dates: nothing in the demo's git state depends on who runs it or when. */
const GIT_ENV = {
  GIT_AUTHOR_NAME: 'navi demo',
  GIT_AUTHOR_EMAIL: 'demo@navi.invalid',
  GIT_COMMITTER_NAME: 'navi demo',
  GIT_COMMITTER_EMAIL: 'demo@navi.invalid',
  GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
};

/** The environment the demo's navi runs with: the git identity above, for the model's commit too. */
export function demoEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, ...GIT_ENV, ...extra };
}

/** Copies `demo/project/` into `dir` and commits it. */
export function prepareDemoProject(dir: string): void {
  cpSync(join(ROOT, 'demo', 'project'), dir, { recursive: true });
  const git = (...args: string[]): void => {
    execFileSync('git', ['-c', 'init.defaultBranch=main', ...args], { cwd: dir, env: demoEnv({}), stdio: 'ignore' });
  };
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'demo project: add() is broken');
}

const FIXED = "// Small arithmetic helpers used by the demo task.\nexport function add(a, b) {\n  return a + b;\n}\n";

const call = (thinking: string, name: string, args: Record<string, unknown>): FakeTurn => ({ thinking, tool_calls: [{ name, arguments: args }] });

/**
 * A two-iteration loop, as a thinking model with tools would run it: iteration 1 sends a
 * researcher sub-agent to find the cause, fixes math.js, sees the test pass and signals exit
 * too early (nothing committed: the gate blocks it); iteration 2 commits and signals again,
 * and the gate lets it exit.
 */
export function demoScript(): FakeScript {
  return {
    on_exhausted: 'error',
    turns: [
      // Iteration 1: the main agent delegates the investigation.
      call(
        'The task says `node test.js` fails. Before touching anything I want to know why; a read-only researcher can look at the code and the test for me.',
        'spawn_agent',
        { task: 'Read math.js and test.js and explain why `node test.js` fails. Do not change anything.', profile_id: 'researcher' },
      ),
      // The researcher sub-agent.
      { thinking: 'I need both files: the function and its test.', tool_calls: [{ name: 'read_file', arguments: { path: 'math.js' } }, { name: 'read_file', arguments: { path: 'test.js' } }] },
      { thinking: 'add() returns a - b, so add(2, 3) is -1; the test expects 5.', content: 'Cause: `add(a, b)` in math.js returns `a - b`. test.js expects `add(2, 3) === 5` and gets -1. Fix: return `a + b`.' },
      // Back in the main agent.
      call('The researcher found it: add() subtracts. I will fix math.js.', 'write_file', { path: 'math.js', content: FIXED }),
      call('Now run the test to confirm.', 'shell', { command: 'node test.js' }),
      call('The test passes. I think the task is done.', 'loop_signal', { type: 'exit', success: true, reason: 'add() fixed; node test.js passes' }),
      { content: 'Fixed `add()` in math.js (it subtracted). `node test.js` passes.' },
      // Iteration 2: the gate blocked the exit (nothing committed); commit and signal again.
      call('The runner blocked my exit: the fix is not committed. Commit it.', 'shell', { command: "git commit -qam 'Fix add(): it subtracted instead of adding'" }),
      call('Committed, and the tests pass. Signal exit again.', 'loop_signal', { type: 'exit', success: true, reason: 'add() fixed, node test.js passes, fix committed' }),
      { content: 'The fix is committed and `node test.js` passes.' },
    ],
  };
}
