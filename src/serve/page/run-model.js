/**
 * The state of one loop run as the page shows it, folded from schema-v1 events (README "Events")
 * and the run's REST snapshot. Pure: no DOM, so it is tested in Node (test/serve-page/run-model.unit.test.ts).
 * Events are applied in `seq` order; one already seen (a late subscriber's replay overlapping
 * the snapshot) is skipped.
 */

/** Statuses of a loop run that can still change. */
const LIVE = new Set(['running', 'awaiting_decision']);

/** Events that belong to the current iteration's live stream. */
const STREAM_TYPES = new Set(['thinking_delta', 'thinking_end', 'text_delta', 'tool_started', 'tool_call', 'warning', 'error']);

/**
 * @typedef {{kind: string, text?: string, closed?: boolean, callId?: string, name?: string, arguments?: unknown,
 *   ok?: boolean | null, output?: string, durationMs?: number | null, truncated?: boolean, code?: string}} StreamBlock
 * @typedef {{n: number, status: Record<string, unknown> | null, gate: Record<string, unknown> | null,
 *   decisions: Array<Record<string, unknown>>, tokensAtStart: number | null, startedAt: string | null}} IterationRecord
 * @typedef {{id: string, task: string, taskName: string, source: string, status: string, config: Record<string, unknown> | null,
 *   iterations: IterationRecord[], current: {n: number, startedAt: string, blocks: StreamBlock[], usage: unknown, stopReason: string | null} | null,
 *   tokensSpent: number, pending: {seq: number, prompt: string, question: string, options: string[], words?: string[], block?: string, iteration: number} | null,
 *   stagnation: Array<Record<string, unknown>>, diversified: Array<Record<string, unknown>>, notices: Array<Record<string, unknown>>,
 *   complete: Record<string, unknown> | null, result: Record<string, unknown> | null, startedAt: string | null, lastSeq: number, fellBehind: boolean,
 *   stopRequested?: boolean, owner?: string}} RunState
 */

/**
 * A fresh run state.
 * @param {string} id
 * @returns {RunState}
 */
export function emptyRun(id) {
  return {
    id,
    task: '',
    taskName: '',
    source: '',
    status: 'unknown',
    config: null,
    iterations: [],
    current: null,
    tokensSpent: 0,
    pending: null,
    stagnation: [],
    diversified: [],
    notices: [],
    complete: null,
    result: null,
    startedAt: null,
    lastSeq: -1,
    fellBehind: false,
  };
}

/** Whether a run status means the loop may still produce events. */
export function isLive(status) {
  return LIVE.has(status);
}

/** The iteration record numbered `n`, created in order when missing. */
function iterationOf(state, n) {
  let it = state.iterations.find((i) => i.n === n);
  if (!it) {
    it = { n, status: null, gate: null, decisions: [], tokensAtStart: null, startedAt: null };
    state.iterations.push(it);
    state.iterations.sort((a, b) => a.n - b.n);
  }
  return it;
}

/** The loop iteration an event belongs to (loop events carry it as `iteration` too). */
function loopIterationOf(ev) {
  if (typeof ev.loop_iteration === 'number') return ev.loop_iteration;
  return typeof ev.iteration === 'number' ? ev.iteration : 0;
}

/** Appends a streamed piece to the current iteration's blocks (merging runs of one kind). */
function appendStream(current, ev) {
  const blocks = current.blocks;
  const last = blocks[blocks.length - 1];
  switch (ev.type) {
    case 'thinking_delta':
    case 'text_delta': {
      const kind = ev.type === 'thinking_delta' ? 'thinking' : 'text';
      if (last && last.kind === kind && !last.closed) last.text += ev.text;
      else blocks.push({ kind, text: ev.text, closed: false });
      return;
    }
    case 'thinking_end':
      if (last && last.kind === 'thinking') last.closed = true;
      return;
    case 'tool_started':
      blocks.push({ kind: 'tool', callId: ev.call_id, name: ev.name, arguments: ev.arguments, ok: null, output: '', durationMs: null });
      return;
    case 'tool_call': {
      const tool = blocks.find((b) => b.kind === 'tool' && b.callId === ev.call_id && b.ok === null);
      const done = { ok: ev.ok, output: ev.output, durationMs: ev.duration_ms, truncated: ev.truncated };
      if (tool) Object.assign(tool, done);
      else blocks.push({ kind: 'tool', callId: ev.call_id, name: ev.name, arguments: ev.arguments, ...done });
      return;
    }
    case 'warning':
    case 'error':
      blocks.push({ kind: ev.type, code: ev.code, text: ev.message });
      return;
    default:
      return;
  }
}

/**
 * Folds one event into `state` (mutates and returns it).
 * @param {RunState} state
 * @param {Record<string, any>} ev
 * @returns {RunState}
 */
export function applyRunEvent(state, ev) {
  if (typeof ev.seq === 'number') {
    if (ev.seq <= state.lastSeq) return state;
    state.lastSeq = ev.seq;
  }
  if (ev.type === 'serve_fell_behind') {
    state.fellBehind = true;
    return state;
  }
  if (ev.type === 'serve_error' || ev.type === 'serve_replay_truncated') {
    state.notices.push({ kind: 'warning', code: ev.type, message: typeof ev.message === 'string' ? ev.message : String(ev.error?.message ?? '') });
    return state;
  }
  if (ev.type === 'serve_iteration_committed' && ev.iteration && typeof ev.iteration === 'object') {
    // A run of another navi process, followed by the server from committed rows.
    applyIterationRow(state, ev.iteration, true);
    return state;
  }
  if (ev.type === 'serve_run_updated' && ev.run && typeof ev.run === 'object') {
    const status = str(ev.run, 'status');
    if (status) state.status = status === 'running' && ev.run.alive === false ? 'stale' : status;
    applyRunSnapshot(state, ev.run);
    return state;
  }
  if (ev.type === 'serve_run_removed') {
    state.status = 'removed';
    return state;
  }
  if (STREAM_TYPES.has(ev.type)) {
    if (ev.is_subagent !== true && state.current) appendStream(state.current, ev);
    if (ev.type === 'warning' || ev.type === 'error') state.notices.push({ kind: ev.type, code: ev.code, message: ev.message, iteration: loopIterationOf(ev) });
    return state;
  }
  switch (ev.type) {
    case 'loop_started':
      state.task = ev.task;
      state.taskName = ev.task_name;
      state.source = ev.source;
      state.status = 'running';
      state.startedAt = state.startedAt ?? ev.ts;
      state.config = {
        maxIterations: ev.max_iterations,
        approval: ev.iteration_approval,
        periodicInterval: ev.periodic_interval,
        stagnationThreshold: ev.stagnation_threshold,
        strategy: ev.stagnation_diversify_strategy,
        neverPause: ev.never_pause_on_stagnation,
        decisions: ev.decisions,
        checks: ev.checks,
        maxTokens: ev.max_tokens,
        deadlineAt: ev.deadline_at,
        iterationTimeoutS: ev.iteration_timeout_s,
        gitRepo: ev.git_repo,
      };
      return state;
    case 'iteration_started': {
      const n = loopIterationOf(ev);
      const it = iterationOf(state, n);
      it.tokensAtStart = ev.tokens_spent;
      it.startedAt = ev.ts;
      state.tokensSpent = Math.max(state.tokensSpent, ev.tokens_spent);
      if (state.config) state.config.maxIterations = ev.max_iterations;
      state.current = { n, startedAt: ev.ts, blocks: [], usage: null, stopReason: null };
      state.status = 'running';
      return state;
    }
    case 'stream_end':
      if (state.current && ev.is_subagent !== true) {
        state.current.usage = ev.usage;
        state.current.stopReason = ev.stop_reason;
        const it = iterationOf(state, state.current.n);
        if (it.tokensAtStart !== null) {
          state.tokensSpent = Math.max(state.tokensSpent, it.tokensAtStart + ev.usage.prompt_tokens + ev.usage.completion_tokens);
        }
      }
      return state;
    case 'iteration_status':
      iterationOf(state, loopIterationOf(ev)).status = ev;
      return state;
    case 'exit_gate':
      iterationOf(state, loopIterationOf(ev)).gate = ev;
      return state;
    case 'approval_requested':
      state.pending = { seq: ev.seq, prompt: ev.prompt, question: ev.question, options: ev.options, block: ev.block, iteration: loopIterationOf(ev) };
      state.status = 'awaiting_decision';
      return state;
    case 'approval_decision':
      iterationOf(state, loopIterationOf(ev)).decisions.push(ev);
      state.pending = null;
      state.status = 'running';
      return state;
    case 'stagnation_detected':
      state.stagnation.push(ev);
      return state;
    case 'diversified':
      state.diversified.push(ev);
      return state;
    case 'loop_complete':
      state.complete = ev;
      state.status = ev.status;
      state.pending = null;
      return state;
    case 'result':
      state.result = ev;
      if (ev.usage) state.tokensSpent = Math.max(state.tokensSpent, ev.usage.prompt_tokens + ev.usage.completion_tokens);
      if (!state.complete) state.status = ev.status === 'success' ? 'completed' : ev.status;
      state.pending = null;
      return state;
    default:
      return state;
  }
}

/** A number field of an object, or `fallback`. */
function num(obj, key, fallback = null) {
  const v = obj ? obj[key] : undefined;
  return typeof v === 'number' ? v : fallback;
}

/** A string field of an object, or `fallback`. */
function str(obj, key, fallback = '') {
  const v = obj ? obj[key] : undefined;
  return typeof v === 'string' ? v : fallback;
}

/** An object field, or null. */
function obj(o, key) {
  const v = o ? o[key] : undefined;
  return v && typeof v === 'object' && !Array.isArray(v) ? v : null;
}

/** "25%" or 25 → 25; null when it is neither. */
function intOf(v) {
  if (typeof v === 'number') return v;
  const m = typeof v === 'string' ? /-?\d+/.exec(v) : null;
  return m ? Number(m[0]) : null;
}

/**
 * An iteration's status from its REST row (docs/serve-api.md): the stored columns, and the
 * NAVIGATOR_STATUS fields the server read back from the block (`status`: strings such as
 * `progress: "25%"`, `stagnation: "1/3"`, `next_action`).
 */
export function statusOfRow(row) {
  const fields = obj(row, 'status') ?? {};
  const stagnation = /^(\d+)\/(\d+)/.exec(str(fields, 'stagnation'));
  return {
    phase: str(row, 'phase') || str(fields, 'phase'),
    progress: intOf(fields.progress) ?? 0,
    indicators: obj(row, 'indicators') ?? {},
    state_hash: str(row, 'state_hash') || str(fields, 'state_hash'),
    stagnation_count: stagnation ? Number(stagnation[1]) : null,
    stagnation_threshold: stagnation ? Number(stagnation[2]) : null,
    next_action: str(fields, 'next_action'),
    exit_signal: row.exit_signal === true,
    block: str(row, 'status_block'),
  };
}

/** The decisions stored with an iteration (one object, a list, or none). */
function decisionsOfRow(row) {
  const d = row.decision ?? row.decisions;
  const list = Array.isArray(d) ? d : d && typeof d === 'object' ? [d] : [];
  return list.filter((x) => x && typeof x === 'object' && typeof x.decision === 'string');
}

/** One committed iteration row; `replace`: it is newer than what the state holds. */
function applyIterationRow(state, row, replace) {
  const n = num(row, 'iteration');
  if (n === null) return;
  const it = iterationOf(state, n);
  if (replace || !it.status) it.status = statusOfRow(row);
  if ((replace || !it.gate) && typeof row.gate_decision === 'string') it.gate = { decision: row.gate_decision, reason: str(row, 'gate_reason') };
  if (replace || it.decisions.length === 0) it.decisions = decisionsOfRow(row);
}

/**
 * Seeds a state from `GET /runs/{id}` (the run, its stored loop configuration and its committed
 * iterations). Live events applied afterwards win; the snapshot only fills what they have not said.
 * @param {RunState} state
 * @param {any} run
 * @returns {RunState}
 */
export function applyRunSnapshot(state, run) {
  if (!run || typeof run !== 'object') return state;
  state.task = state.task || str(run, 'task');
  state.taskName = state.taskName || str(run, 'task_name');
  const status = str(run, 'status');
  // A run stored as running whose process is gone is not live, whatever its row says.
  const stale = status === 'running' && run.alive === false;
  if (status && (state.status === 'unknown' || !isLive(status))) state.status = stale ? 'stale' : status;
  state.startedAt = state.startedAt ?? (str(run, 'started_at') || null);
  const usage = obj(run, 'usage');
  if (usage) state.tokensSpent = Math.max(state.tokensSpent, num(usage, 'prompt_tokens', 0) + num(usage, 'completion_tokens', 0));
  if (!state.config) {
    const config = obj(run, 'config') ?? {};
    const loop = obj(config, 'loop_mode') ?? {};
    state.config = {
      maxIterations: num(run, 'max_iterations', num(loop, 'max_iterations')),
      approval: str(loop, 'iteration_approval') || null,
      periodicInterval: num(loop, 'periodic_interval'),
      stagnationThreshold: num(loop, 'stagnation_threshold'),
      strategy: str(loop, 'stagnation_diversify_strategy') || null,
      maxTokens: num(run, 'max_tokens'),
      deadlineAt: str(run, 'deadline_at') || null,
      iterationTimeoutS: num(config, 'iteration_timeout_s'),
      checks: [],
    };
  }
  if (typeof run.owner === 'string') state.owner = run.owner;
  const iterations = Array.isArray(run.iterations) ? run.iterations : [];
  for (const row of iterations) if (row && typeof row === 'object') applyIterationRow(state, row, false);
  const pending = obj(run, 'pending_decision');
  if (!state.pending && pending && Array.isArray(pending.options)) {
    state.pending = {
      seq: -1,
      prompt: str(pending, 'prompt', 'approval'),
      question: str(pending, 'question'),
      options: pending.options,
      words: Array.isArray(pending.words) ? pending.words : undefined,
      block: pending.block,
      iteration: num(pending, 'iteration', 0),
    };
    state.status = 'awaiting_decision';
  }
  return state;
}

/**
 * The `--decisions` word for option `index` of a prompt: the server's `words` when it sent them,
 * else from the label as shown (Clarify is adjust, Finish is continue).
 */
export function optionWord(pending, index) {
  const given = Array.isArray(pending.words) ? pending.words[index] : undefined;
  return typeof given === 'string' ? given : decisionWord(pending.options[index]);
}

/** The `--decisions` word for an option as shown (Clarify is adjust, Finish is continue). */
export function decisionWord(option) {
  const word = String(option).trim().toLowerCase();
  if (word === 'clarify') return 'adjust';
  if (word === 'finish') return 'continue';
  return word;
}

/** Whether choosing `option` asks for feedback text first. */
export function needsFeedback(option) {
  return decisionWord(option) === 'adjust';
}

/** "1.2k", "34k", "1.5M": token counts at a glance. */
export function shortCount(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '–';
  if (n < 1000) return String(n);
  if (n < 10_000) return `${(n / 1000).toFixed(1)}k`;
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** "45 s", "12 min", "3 h 5 min": a duration in milliseconds. */
export function shortDuration(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '–';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
}

/**
 * The budget lines of a run at time `now` (ms): tokens against `max_tokens`, wall clock against
 * the deadline, the current iteration against its timeout. `fraction` is null without a limit.
 */
export function budgets(state, now) {
  const cfg = state.config ?? {};
  const out = [];
  const maxTokens = typeof cfg.maxTokens === 'number' ? cfg.maxTokens : null;
  out.push({
    key: 'tokens',
    label: 'Tokens',
    value: maxTokens === null ? `${shortCount(state.tokensSpent)} (no limit)` : `${shortCount(state.tokensSpent)} of ${shortCount(maxTokens)}`,
    fraction: maxTokens === null ? null : Math.min(1, state.tokensSpent / maxTokens),
  });
  const started = state.startedAt ? Date.parse(state.startedAt) : NaN;
  const deadline = cfg.deadlineAt ? Date.parse(cfg.deadlineAt) : NaN;
  const live = isLive(state.status);
  if (Number.isFinite(deadline)) {
    const total = Number.isFinite(started) ? deadline - started : NaN;
    const left = deadline - now;
    out.push({
      key: 'deadline',
      label: 'Time',
      value: live ? `${shortDuration(Math.max(0, left))} left` : `deadline ${new Date(deadline).toISOString().slice(0, 16).replace('T', ' ')}`,
      fraction: Number.isFinite(total) && total > 0 ? Math.min(1, Math.max(0, (now - started) / total)) : null,
    });
  } else if (Number.isFinite(started)) {
    out.push({ key: 'deadline', label: 'Time', value: live ? `${shortDuration(now - started)} so far (no deadline)` : 'no deadline', fraction: null });
  }
  const timeout = typeof cfg.iterationTimeoutS === 'number' ? cfg.iterationTimeoutS * 1000 : null;
  if (timeout !== null && state.current && live && state.status !== 'awaiting_decision') {
    const since = Date.parse(state.current.startedAt);
    if (Number.isFinite(since)) {
      out.push({
        key: 'iteration',
        label: `Iteration ${state.current.n}`,
        value: `${shortDuration(now - since)} of ${shortDuration(timeout)}`,
        fraction: Math.min(1, Math.max(0, (now - since) / timeout)),
      });
    }
  }
  return out;
}

/** The six indicators in the status block's order, with a display mark each. */
export function indicatorMarks(indicators) {
  const order = ['code_committed', 'tests_passing', 'code_simplified', 'docs_updated', 'ticket_closed', 'marker_created'];
  return order.map((key) => {
    const v = indicators ? indicators[key] : undefined;
    const mark = v === true ? 'met' : v === 'skipped' ? 'skipped' : v === false ? 'not met' : 'unknown';
    return { key, label: key.replace(/_/g, ' '), mark };
  });
}
