/**
 * Evidence of one loop iteration (SPEC §7.2), gathered by the runner: the agent's activity
 * (its tool calls), what git shows (files that changed during the turn, commits and changes
 * since the run started, uncommitted tracked changes), the task's checks and ticket, and
 * whether a completion marker was written this run. Outside a git repository there is no git
 * evidence and the record says so; a git failure only makes evidence unknown.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { IterationActivity } from './activity.js';
import type { CheckResult, Evidence, TicketResult } from './evidence.js';
import {
  changedBetween,
  dirtySnapshot,
  hasTrackedChanges,
  untrackedPaths,
  type DirtySnapshot,
  type GitProbe,
} from './git-probe.js';
import { SKIP_NOT_GIT } from './indicators.js';
import { isMarkerPath, MARKER_DIR } from './markers.js';
import { codeSimplifiedDeclared } from './signals.js';

/** The git side of a run: the probe, whether cwd is a repository, HEAD when the run started. */
export interface GitContext {
  probe: GitProbe;
  repo: boolean;
  startHead: string | null;
}

/** The work tree at one moment: dirty files with signatures, and HEAD. */
export interface TreeState {
  dirty: DirtySnapshot;
  head: string | null;
}

/** Reads the work tree's state (null outside git or when git fails). */
export async function observeTree(cwd: string, git: GitContext): Promise<TreeState | null> {
  if (!git.repo) return null;
  const [entries, head] = await Promise.all([git.probe.status(cwd), git.probe.head(cwd)]);
  if (entries === null) return null;
  return { dirty: await dirtySnapshot(cwd, entries), head };
}

/** Everything collectEvidence combines. */
export interface EvidenceInput {
  cwd: string;
  activity: IterationActivity;
  git: GitContext;
  /** The tree before the agent's turn (null outside git or when git failed then). */
  before: TreeState | null;
  /** Files changed since start as known before this iteration (tool writes of earlier iterations). */
  changedSinceStartBefore: readonly string[];
  /** The run's start; markers written since count as this run's. */
  runStartedAt: Date;
}

/** Evidence plus what the runner keeps for the next iteration and the record. */
export interface CollectedEvidence {
  /** Evidence without checks and ticket (added by withChecks). */
  evidence: Evidence;
  /** HEAD after the turn. */
  head: string | null;
  /** What could not be known, one line each (stored and shown in `runs show`). */
  unknown: string[];
}

function unique(items: Iterable<string>): string[] {
  return [...new Set(items)].sort();
}

/** True when a marker file under `.agent/.context-markers/` was written at or after `since`. */
export async function markerWrittenSince(cwd: string, since: Date): Promise<boolean> {
  const dir = join(cwd, MARKER_DIR);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return false;
  }
  const stats = await Promise.all(
    names.filter((n) => n.endsWith('.md')).map((n) => stat(join(dir, n)).then((s) => s.mtimeMs, () => 0)),
  );
  return stats.some((mtime) => mtime >= since.getTime());
}

/** Gathers the agent- and git-side evidence after the turn (checks are run separately). */
export async function collectEvidence(input: EvidenceInput): Promise<CollectedEvidence> {
  const { cwd, activity, git } = input;
  const unknown: string[] = [];
  const written = activity.filesWritten;
  let filesChanged = written;
  let sinceStart = unique([...input.changedSinceStartBefore, ...written]);
  let commits = 0;
  let dirtyTracked = false;
  let head: string | null = null;
  if (git.repo) {
    const [entries, headNow, commitsNow, diffSinceStart] = await Promise.all([
      git.probe.status(cwd),
      git.probe.head(cwd),
      git.probe.commitsSince(cwd, git.startHead),
      git.probe.changedFiles(cwd, git.startHead),
    ]);
    head = headNow;
    commits = headNow === null ? 0 : commitsNow;
    if (entries === null) {
      unknown.push('git status failed: files changed and uncommitted changes are unknown this iteration');
    } else {
      dirtyTracked = hasTrackedChanges(entries);
      const after = await dirtySnapshot(cwd, entries);
      const committed =
        input.before !== null && headNow !== null && input.before.head !== headNow
          ? await git.probe.changedFiles(cwd, input.before.head, headNow)
          : [];
      const turnChanges = input.before === null ? [...after.keys()] : changedBetween(input.before.dirty, after);
      filesChanged = unique([...written, ...turnChanges, ...committed]);
      sinceStart = unique([...sinceStart, ...diffSinceStart, ...untrackedPaths(entries), ...filesChanged]);
    }
  } else {
    unknown.push(`commits and uncommitted changes: ${SKIP_NOT_GIT}`);
  }
  const markerWritten = written.some(isMarkerPath) || (await markerWrittenSince(cwd, input.runStartedAt));
  const evidence: Evidence = {
    gitRepo: git.repo,
    filesRead: unique(activity.filesRead),
    filesChanged: unique(filesChanged),
    filesChangedSinceStart: sinceStart,
    testRuns: activity.testRuns,
    commitsSinceStart: commits,
    uncommittedTrackedChanges: dirtyTracked,
    checks: [],
    ticket: null,
    markerWritten,
    codeSimplifiedDeclared: codeSimplifiedDeclared(activity.finalText, activity.signalArgs),
    toolCalls: activity.toolCalls,
  };
  return { evidence, head, unknown };
}

/** The evidence with the checks' and ticket's results added. */
export function withChecks(e: Evidence, checks: CheckResult[], ticket: TicketResult | null): Evidence {
  return { ...e, checks, ticket };
}

/** Evidence as stored in `loop_iterations.evidence` and shown by `navi runs show` (snake_case). */
export function evidenceRecord(e: Evidence, extra: { head: string | null; unknown: string[]; lastAction: string; shellCommands: number }): Record<string, unknown> {
  return {
    git_repo: e.gitRepo,
    head: extra.head,
    files_read: e.filesRead,
    files_changed: e.filesChanged,
    files_changed_since_start: e.filesChangedSinceStart,
    test_runs: e.testRuns.map((t) => ({ command: t.command, exit_code: t.exitCode })),
    shell_commands: extra.shellCommands,
    commits_since_start: e.commitsSinceStart,
    uncommitted_tracked_changes: e.uncommittedTrackedChanges,
    checks: e.checks.map((c) => ({
      name: c.name,
      exit_code: c.exitCode,
      duration_ms: c.durationMs,
      timed_out: c.timedOut === true,
      output_tail: c.outputTail,
    })),
    ticket: e.ticket === null ? null : { exit_code: e.ticket.exitCode },
    marker_written: e.markerWritten,
    code_simplified_declared: e.codeSimplifiedDeclared,
    tool_calls: e.toolCalls,
    last_action: extra.lastAction,
    unknown: extra.unknown,
  };
}
