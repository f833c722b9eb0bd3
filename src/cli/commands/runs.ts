/**
 * `navi runs list|show ID` (SPEC §3): loop runs with their status, counters and budgets, and a
 * run's committed iterations — status blocks, gate decisions and reasons, decisions taken,
 * evidence and tokens. Text for people, one JSON object with `-o json`/`stream-json`.
 */
import type { CliHost } from '../host.js';
import { NotFoundError } from '../../errors.js';
import type { LoopIterationRecord, LoopRunRecord } from '../../store/types.js';
import { ownerOf, ownerReport, pidAlive, type OwnerReport } from '../../loop/ownership.js';
import { isRecord } from '../../util/guards.js';
import { checkLines } from '../check-lines.js';
import type { GlobalArgs } from '../global-args.js';
import { printJson, withStore } from '../setup.js';
import { terminalSafe } from '../terminal-text.js';
import { hostname } from 'node:os';

type Args = GlobalArgs & Record<string, unknown>;


function iso(d: Date | null): string | null {
  return d === null ? null : d.toISOString();
}

/** Who drives the run, and (a `running` one) whether that process is still there. */
function ownerOfRun(r: LoopRunRecord, now: number): OwnerReport {
  return ownerReport(r.status, { owner: ownerOf(r.config), updatedAt: r.updatedAt, me: { pid: process.pid, host: hostname() }, now, isAlive: pidAlive });
}

/** A run as JSON (snake_case). */
function runJson(r: LoopRunRecord, now = Date.now()): Record<string, unknown> {
  const owner = ownerOfRun(r, now);
  return {
    id: r.id,
    session_id: r.sessionId,
    task_name: r.taskName,
    status: r.status,
    reason: r.reason,
    iteration: r.iteration,
    max_iterations: r.maxIterations,
    stagnation_count: r.stagnationCount,
    hash_history: r.hashHistory,
    diversifications: r.diversifications,
    prompt_tokens: r.promptTokens,
    completion_tokens: r.completionTokens,
    max_tokens: r.maxTokens,
    deadline_at: iso(r.deadlineAt),
    git_head_at_start: r.gitHeadAtStart,
    cwd: r.cwd,
    started_at: iso(r.startedAt),
    updated_at: iso(r.updatedAt),
    finished_at: iso(r.finishedAt),
    // `alive`: false for a run left `running` by a navi that is gone (killed); null when not running.
    owner: owner.owner === null ? null : { pid: owner.owner.pid, host: owner.owner.host, since: owner.owner.since, alive: owner.alive },
    task: r.task,
    config: r.config,
  };
}

function iterationJson(it: LoopIterationRecord): Record<string, unknown> {
  return {
    iteration: it.iteration,
    phase: it.phase,
    state_hash: it.stateHash,
    indicators: it.indicators,
    gate_decision: it.gateDecision,
    gate_reason: it.gateReason,
    exit_signal: it.exitSignal,
    decision: it.decision,
    evidence: it.evidence,
    status_block: it.statusBlock,
    prompt_tokens: it.promptTokens,
    completion_tokens: it.completionTokens,
    duration_ms: it.durationMs,
    started_at: iso(it.startedAt),
    finished_at: iso(it.finishedAt),
  };
}

function when(d: Date): string {
  return d.toISOString().replace('T', ' ').slice(0, 16);
}

export async function runsList(argv: Args, host: CliHost): Promise<number> {
  const limit = typeof argv.limit === 'number' && argv.limit > 0 ? argv.limit : 20;
  return withStore(argv, host, async (store, json) => {
    const runs = await store.loopRuns.list({ limit });
    if (json) {
      printJson(host.stdout, { runs: runs.map(runJson) });
      return 0;
    }
    if (runs.length === 0) {
      host.stdout.write('no loop runs yet; start one with: navi loop tasks/<task>.yaml\n');
      return 0;
    }
    const now = Date.now();
    for (const r of runs) {
      const progress = `${r.iteration}/${r.maxIterations}`.padStart(5);
      const why = r.reason ? ` (${r.reason})` : '';
      const owner = ownerOfRun(r, now);
      // A run whose navi was killed still says `running` in the database: say its owner is gone.
      const gone = owner.alive === false ? ` — owner ${owner.text}; resume with: navi loop --resume ${r.id}` : '';
      host.stdout.write(`${terminalSafe(`${r.id}  ${when(r.startedAt)}  ${r.status.padEnd(16)} ${progress}  ${r.taskName}${why}${gone}`)}\n`);
    }
    return 0;
  });
}

/** One line per decision taken in an iteration (approval, stagnation, max iterations, diversification). */
function decisionLines(decision: unknown): string[] {
  if (!isRecord(decision)) return [];
  const out: string[] = [];
  const show = (label: string, d: unknown): void => {
    if (!isRecord(d)) return;
    const line = typeof d.line === 'number' ? ` line ${d.line}` : '';
    const feedback = typeof d.feedback === 'string' && d.feedback !== '' ? ` — ${d.feedback}` : '';
    out.push(`${label}: ${String(d.decision)} (${String(d.source)}${line})${feedback}`);
  };
  show('approval', decision.approval);
  if (isRecord(decision.stagnation)) {
    out.push(`stagnation: ${String(decision.stagnation.reason)} × ${String(decision.stagnation.count)}`);
    show('  decision', decision.stagnation.decision);
  }
  if (isRecord(decision.diversification)) out.push(`diversified: ${String(decision.diversification.strategy)} (attempt ${String(decision.diversification.attempt)})`);
  show('max iterations', decision.max_iterations);
  if (isRecord(decision.question)) out.push(`model asked: ${String(decision.question.question)}`);
  return out;
}

export async function runsShow(argv: Args, host: CliHost): Promise<number> {
  const id = String(argv.id);
  return withStore(argv, host, async (store, json) => {
    const run = await store.loopRuns.get(id);
    if (!run) throw new NotFoundError('run_not_found', `no loop run '${id}'; see: navi runs list`);
    const iterations = await store.loopRuns.listIterations(id);
    const format = argv.format;
    if (format === 'md' || format === 'junit') {
      // The same renderers as `navi loop --summary/--junit`: a report of a stored run reads the same.
      const [{ buildRunReport }, render] = await Promise.all([
        import('../../report/run-report.js'),
        format === 'md' ? import('../../report/markdown.js').then((m) => m.renderMarkdown) : import('../../report/junit.js').then((m) => m.renderJunit),
      ]);
      host.stdout.write(render(buildRunReport(run, iterations)));
      return 0;
    }
    if (json || format === 'json') {
      printJson(host.stdout, { run: runJson(run), iterations: iterations.map(iterationJson) });
      return 0;
    }
    const lines = [
      `loop run ${run.id}: ${run.taskName}`,
      `status: ${run.status}${run.reason ? ` (${run.reason})` : ''}; iteration ${run.iteration}/${run.maxIterations}; diversifications ${run.diversifications}`,
      `tokens: ${run.promptTokens + run.completionTokens}${run.maxTokens !== null ? ` of ${run.maxTokens}` : ''}; deadline: ${run.deadlineAt?.toISOString() ?? 'none'}`,
      `cwd: ${run.cwd}; session: ${run.sessionId}; started ${run.startedAt.toISOString()}${run.finishedAt ? `, finished ${run.finishedAt.toISOString()}` : ''}`,
      `hash history (since last reset): ${run.hashHistory.join(' ') || '(empty)'}`,
    ];
    const owner = ownerOfRun(run, Date.now());
    if (run.status === 'running') lines.push(`owner: ${owner.text}${owner.alive === true ? ' (running it now)' : ''}`);
    if (run.status !== 'completed' && run.status !== 'aborted') lines.push(`resume with: navi loop --resume ${run.id}`);
    for (const it of iterations) {
      lines.push('', `── iteration ${it.iteration}: ${it.phase}, hash ${it.stateHash}, gate ${it.gateDecision ?? '-'} (${it.gateReason ?? ''}), ${it.durationMs} ms, ${it.promptTokens + it.completionTokens} tokens`);
      lines.push(...decisionLines(it.decision));
      lines.push(...checkLines(it.evidence));
      lines.push(it.statusBlock);
    }
    // Status blocks and reasons quote the model (its exit report, questions): no control sequences.
    host.stdout.write(`${lines.map(terminalSafe).join('\n')}\n`);
    return 0;
  });
}
