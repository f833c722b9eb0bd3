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
  type GitStatusEntry,
} from './git-probe.js';
import { SKIP_NOT_GIT } from './indicators.js';
import { isMarkerPath, markerDirInside } from './markers.js';
import { codeSimplifiedDeclared } from './exit-signal.js';

/**
 * The git side of a run: the probe, whether cwd is a repository, HEAD when the run started, and
 * what this process already computed (git is asked again only when something moved: each git
 * call is a process spawn, the largest part of an iteration's bookkeeping).
 */
export interface GitContext {
  probe: GitProbe;
  repo: boolean;
  startHead: string | null;
  /** HEAD and the commits since start counted for it. */
  known?: { head: string | null; commits: number };
  /** The diff since start has been computed once by this process. */
  sinceStartKnown?: boolean;
}

/** The work tree at one moment: its status entries, dirty files with signatures, and HEAD. */
export interface TreeState {
  entries: GitStatusEntry[];
  dirty: DirtySnapshot;
  head: string | null;
}

/** Reads the work tree's state in one git call (null outside git or when git fails). */
export async function observeTree(cwd: string, git: GitContext): Promise<TreeState | null> {
  if (!git.repo) return null;
  const st = await git.probe.status(cwd);
  if (st === null) return null;
  return { entries: st.entries, dirty: await dirtySnapshot(cwd, st.entries), head: st.head };
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
  /** The tree after the turn (null outside git or when git failed). */
  after: TreeState | null;
}

function unique(items: Iterable<string>): string[] {
  return [...new Set(items)].sort();
}

/** True when a marker file under `.agent/.context-markers/` was written at or after `since`. */
export async function markerWrittenSince(cwd: string, since: Date): Promise<boolean> {
  // A symlinked folder leading out of cwd holds no marker of this run.
  const inside = markerDirInside(cwd);
  if (!inside.ok) return false;
  const dir = inside.abs;
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
  let after: TreeState | null = null;
  if (git.repo) {
    after = await observeTree(cwd, git);
    if (after === null) {
      unknown.push('git status failed: files changed, commits and uncommitted changes are unknown this iteration');
    } else {
      const tree = after;
      const before = input.before;
      const headMoved = before === null || before.head !== tree.head;
      dirtyTracked = hasTrackedChanges(tree.entries);
      const [counted, committed] = await Promise.all([
        git.known !== undefined && git.known.head === tree.head
          ? Promise.resolve(git.known.commits)
          : tree.head === null
            ? Promise.resolve(0)
            : git.probe.commitsSince(cwd, git.startHead),
        before !== null && before.head !== null && tree.head !== null && headMoved ? git.probe.changedFiles(cwd, before.head, tree.head) : Promise.resolve([]),
      ]);
      commits = counted;
      git.known = { head: tree.head, commits };
      const turnChanges = before === null ? [...tree.dirty.keys()] : changedBetween(before.dirty, tree.dirty);
      filesChanged = unique([...written, ...turnChanges, ...committed]);
      // The diff since start only changes when this iteration changed something.
      const diffSinceStart = filesChanged.length > 0 || headMoved || git.sinceStartKnown !== true ? await git.probe.changedFiles(cwd, git.startHead) : [];
      git.sinceStartKnown = true;
      sinceStart = unique([...sinceStart, ...diffSinceStart, ...untrackedPaths(tree.entries), ...filesChanged]);
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
  return { evidence, head: after?.head ?? null, unknown, after };
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
