/**
 * What the runner observed in one loop iteration (SPEC §7.2). Indicators, phase and the state
 * hash are derived from this and nothing else: the model's claims never enter it, except the
 * one indicator navigator leaves to the model (`code_simplified`), which is carried as a
 * declaration. Paths are relative to the run's working directory with `/` separators, so the
 * state hash does not change with the machine the loop runs on.
 */

import { parseCommandLine } from '../tools/shell-parse.js';

/** A test command the agent ran through the shell tool this iteration. */
export interface TestRun {
  /** The command line as the agent wrote it. */
  command: string;
  /** Exit code; null when it did not finish (killed, timed out). */
  exitCode: number | null;
}

/** One of the task's `checks`, run by the runner after the agent's turn. */
export interface CheckResult {
  /** The check's `name` from the task file. */
  name: string;
  /** Exit code; null when it did not finish (timed out, killed, could not start). */
  exitCode: number | null;
  /** Wall-clock duration, milliseconds. */
  durationMs: number;
  /** The last part of its combined output (what a user would read to see why it failed). */
  outputTail: string;
  /** It was stopped by its `timeout_s`. */
  timedOut?: boolean;
}

/** The task's `ticket.run` result. */
export interface TicketResult {
  /** Exit code; null when it did not finish. */
  exitCode: number | null;
}

/** Everything the indicators, phase and state hash are derived from. */
export interface Evidence {
  /** Whether the working directory is inside a git repository (commit evidence needs one). */
  gitRepo: boolean;
  /** Files the agent read this iteration (read/search tool calls), relative paths. */
  filesRead: readonly string[];
  /** Files changed this iteration: written by tool calls plus dirty in `git status`, relative paths, no duplicates. */
  filesChanged: readonly string[];
  /** Files changed since the loop started (tool writes of every iteration plus, in git, the diff since the start commit). */
  filesChangedSinceStart: readonly string[];
  /** Test commands the agent ran this iteration, in order (see isTestCommand). */
  testRuns: readonly TestRun[];
  /** A test process the agent started is still running when evidence is gathered (background job). */
  testsRunning?: boolean;
  /** Commits made since the loop started (0 outside git). */
  commitsSinceStart: number;
  /** Tracked files with uncommitted changes (staged or not) at gather time (false outside git). */
  uncommittedTrackedChanges: boolean;
  /** The task's checks, in task-file order; empty when the task has none. */
  checks: readonly CheckResult[];
  /** The task's ticket command result; null when the task has no ticket. */
  ticket: TicketResult | null;
  /** A completion marker was written during this run (by the runner, or by the agent under `.agent/.context-markers/`). */
  markerWritten: boolean;
  /** The model declared the code simplified (signal field or loop_signal argument `code_simplified: true`). */
  codeSimplifiedDeclared: boolean;
  /** Tool calls the agent made this iteration, not counting `loop_signal` itself. */
  toolCalls: number;
}

/** An Evidence with nothing observed; tests and the runner spread their findings over it. */
export function emptyEvidence(): Evidence {
  return {
    gitRepo: true,
    filesRead: [],
    filesChanged: [],
    filesChangedSinceStart: [],
    testRuns: [],
    commitsSinceStart: 0,
    uncommittedTrackedChanges: false,
    checks: [],
    ticket: null,
    markerWritten: false,
    codeSimplifiedDeclared: false,
    toolCalls: 0,
  };
}

/** Documentation by extension: what navigator's docs_updated means by "Documentation files". */
const DOC_EXTENSIONS = /\.(?:md|mdx|markdown|rst|adoc|asciidoc)$/i;

/** Conventional top-level documents that often have no extension. */
const DOC_NAMES = /(?:^|\/)(?:README|CHANGELOG|CHANGES|CONTRIBUTING|AUTHORS|NOTICE|HISTORY)(?:\.[^/]*)?$/i;

/** Documentation by place: any file under a docs folder counts (diagrams, generated API pages). */
const DOC_DIRS = /(?:^|\/)docs?\//i;

/** navi's own bookkeeping (markers are Markdown) must not count as the agent documenting. */
const BOOKKEEPING = /^\.agent\//;

/** True when a changed path counts towards `docs_updated`. */
export function isDocPath(path: string): boolean {
  const p = path.replace(/\\/g, '/').replace(/^\.\//, '');
  if (BOOKKEEPING.test(p)) return false;
  return DOC_EXTENSIONS.test(p) || DOC_DIRS.test(p) || DOC_NAMES.test(p);
}

/** Runners that are the test command by themselves (`vitest run`, `pytest -x`). */
const TEST_RUNNERS = new Set([
  'vitest', 'jest', 'mocha', 'ava', 'tap', 'jasmine', 'karma', 'playwright', 'cypress',
  'pytest', 'py.test', 'tox', 'nox', 'nosetests', 'rspec', 'phpunit', 'ctest', 'bats',
]);

/** Build tools whose `test` (or `check`) subcommand runs the test suite. */
const TEST_SUBCOMMAND_TOOLS = new Set([
  'npm', 'pnpm', 'yarn', 'bun', 'deno', 'go', 'cargo', 'mvn', 'gradle', './gradlew', 'gradlew',
  'dotnet', 'mix', 'swift', 'zig', 'make', 'rake', 'lein', 'sbt', 'stack', 'cabal', 'dune',
]);

/** Wrappers skipped to reach the real command (`npx vitest`, `env CI=1 npm test`, `time pytest`). */
const WRAPPERS = new Set(['npx', 'pnpx', 'bunx', 'env', 'time', 'nice', 'timeout', 'exec', 'command', 'sudo', 'poetry', 'uv', 'pipenv', 'bundle']);

/** The words of a simple command after env assignments, wrappers and their options. */
function coreWords(words: readonly string[]): string[] {
  let i = 0;
  for (;;) {
    const w = words[i];
    if (w === undefined) return [];
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) i++;
    else if (WRAPPERS.has(w)) {
      i++;
      // `timeout 60 npm test`, `poetry run pytest`, `bundle exec rspec`: skip the wrapper's own arguments.
      while (words[i] !== undefined && (/^-/.test(words[i] ?? '') || /^\d+[smh]?$/.test(words[i] ?? '') || ['run', 'exec'].includes(words[i] ?? ''))) i++;
    } else return words.slice(i);
  }
}

function isTestWords(words: readonly string[]): boolean {
  const [cmd = '', ...rest] = coreWords(words);
  const base = cmd.replace(/^.*\//, '');
  if (TEST_RUNNERS.has(base) || TEST_RUNNERS.has(cmd)) return true;
  if ((base === 'python' || base === 'python3') && rest[0] === '-m') {
    return ['pytest', 'unittest', 'nose', 'tox'].includes(rest[1] ?? '');
  }
  if (base === 'node' && rest.includes('--test')) return true;
  if (TEST_SUBCOMMAND_TOOLS.has(cmd) || TEST_SUBCOMMAND_TOOLS.has(base)) {
    // `npm test`, `npm run test:unit`, `yarn vitest`, `go test ./...`; `check` only for make,
    // where it is the GNU convention for tests (`cargo check` only type-checks).
    const sub = rest.find((w) => !w.startsWith('-') && w !== 'run' && w !== 'exec');
    if (sub === undefined) return false;
    if (TEST_RUNNERS.has(sub)) return true;
    if (sub === 't' && (base === 'npm' || base === 'pnpm')) return true; // npm's own alias for test
    return /^(?:test|tests|spec)(?:[:\-_].*)?$/.test(sub) || (base === 'make' && sub === 'check');
  }
  return false;
}

/**
 * True when a shell command line runs a test suite (any of its simple commands does):
 * `npm test`, `cd pkg && npx vitest run`, `pytest -q`, `go test ./...`, `make check`.
 * Drives `tests_passing` (without checks) and the VERIFY phase.
 */
export function isTestCommand(commandLine: string): boolean {
  return parseCommandLine(commandLine).segments.some(isTestWords);
}
