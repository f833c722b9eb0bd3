/**
 * One loop run: task, budgets, the pending approval prompt as buttons, the latest
 * NAVIGATOR_STATUS, every iteration's status / gate decision / decisions, stagnation and
 * diversification, and the current iteration's stream. Fed by /ws/runs/{id} after the REST
 * snapshot; the stop button and the prompt's buttons POST to the run.
 */
import { api, openEvents } from './api.js';
import { clock, h, replace } from './dom.js';
import { applyRunEvent, applyRunSnapshot, budgets, emptyRun, indicatorMarks, isLive, optionWord } from './run-model.js';
import { streamView } from './stream-view.js';

/** Shows run `id` inside `mount`; returns a function that tears it down. */
export function showRun(mount, id, onChange) {
  const state = emptyRun(id);
  const sections = {
    head: h('div', { class: 'run-head' }),
    task: h('pre', { class: 'task-text', 'data-testid': 'run-task' }),
    notice: h('div', { class: 'notice-area' }),
    budgets: h('div', { class: 'budgets', 'data-testid': 'budgets' }),
    approval: h('div', { class: 'approval-area' }),
    status: h('div', { class: 'status-area' }),
    loopEvents: h('div', { class: 'loop-events' }),
    iterations: h('div', { class: 'iterations' }),
    complete: h('div', { class: 'complete-area' }),
  };
  const stream = streamView('current-stream');
  const currentHead = h('h3', null, 'Current iteration');
  let streamFor = null;
  let approvalFor = null;
  let socket = null;
  let scheduled = false;
  let disposed = false;
  let error = '';

  replace(
    mount,
    h('section', { class: 'run', 'data-testid': 'run-view', 'data-run-id': id },
      sections.head, sections.task, sections.notice, sections.budgets, sections.approval, sections.status, sections.loopEvents,
      h('div', { class: 'current' }, currentHead, stream.el),
      h('h3', null, 'Iterations'), sections.iterations, sections.complete),
  );

  function schedule() {
    if (scheduled || disposed) return;
    scheduled = true;
    requestAnimationFrame(() => {
      scheduled = false;
      if (!disposed) render();
    });
  }

  async function stop() {
    try {
      await api('POST', `/runs/${encodeURIComponent(id)}/stop`, {});
      error = '';
      state.stopRequested = true;
    } catch (err) {
      error = `Stop failed: ${err.message}`;
    }
    schedule();
  }

  /**
   * Redraws `el` only when `key` changed: rebuilding a button on every streamed delta would
   * swallow a click whose press and release fall on either side of a redraw.
   */
  const drawn = new Map();
  function redraw(el, key, draw) {
    if (drawn.get(el) === key) return;
    drawn.set(el, key);
    draw();
  }

  function renderHead() {
    const live = isLive(state.status);
    redraw(sections.head, JSON.stringify([state.status, state.taskName, state.config?.approval, state.owner, state.stopRequested]), () => replace(
      sections.head,
      h('h2', null, state.taskName || id),
      h('span', { class: `badge status-${state.status}`, 'data-testid': 'run-status', role: 'status' }, state.status.replace(/_/g, ' ')),
      state.config?.approval ? h('span', { class: 'badge' }, `approval: ${state.config.approval}`) : null,
      h('span', { class: 'muted run-id' }, id),
      state.owner ? h('span', { class: 'muted', 'data-testid': 'run-owner' }, state.status === 'stale' ? `${state.owner} (gone: resume with navi loop --resume ${id})` : state.owner) : null,
      live ? h('button', { class: 'danger', type: 'button', 'data-testid': 'stop-run', disabled: state.stopRequested === true, onclick: () => void stop() },
        state.stopRequested ? 'Stopping…' : 'Stop') : null,
    ));
    sections.task.textContent = state.task;
    redraw(sections.notice, JSON.stringify([error, state.fellBehind, socket === null, isLive(state.status), state.notices.length]), () => replace(sections.notice,
      error ? h('p', { class: 'error', role: 'alert' }, error) : null,
      state.fellBehind ? h('p', { class: 'error' }, 'This page fell behind the run\'s events. ', h('button', { type: 'button', onclick: () => location.reload() }, 'Reload')) : null,
      socket === null && isLive(state.status) ? h('p', { class: 'muted' }, 'Not following live events.') : null,
      // The run's warnings and errors (and the server's notices), newest last; a few are enough here.
      state.notices.slice(-5).map((n) => h('p', { class: n.kind === 'error' ? 'error' : 'warn', 'data-testid': 'run-notice' },
        `${n.iteration ? `iteration ${n.iteration}: ` : ''}${n.code ? `${n.code}: ` : ''}${n.message}`))));
  }

  function renderBudgets() {
    replace(sections.budgets, budgets(state, Date.now()).map((b) =>
      h('div', { class: 'budget', 'data-testid': `budget-${b.key}` },
        h('span', { class: 'budget-label' }, b.label),
        h('span', { class: 'budget-value' }, b.value),
        b.fraction === null ? null : h('progress', { max: '1', value: String(b.fraction) }))));
  }

  async function decide(word, feedback, buttons) {
    for (const b of buttons) b.disabled = true;
    const body = { decision: word };
    if (feedback) body.feedback = feedback;
    try {
      await api('POST', `/runs/${encodeURIComponent(id)}/decisions`, body);
      error = '';
    } catch (err) {
      error = `Decision not taken: ${err.message}`;
      for (const b of buttons) b.disabled = false;
    }
    schedule();
  }

  function renderApproval() {
    const p = state.pending;
    const key = p ? `${p.seq}:${p.iteration}:${p.prompt}` : null;
    if (key === approvalFor) return;
    approvalFor = key;
    if (!p) {
      sections.approval.replaceChildren();
      return;
    }
    const feedback = h('textarea', { rows: '2', placeholder: 'Feedback for the next iteration (Adjust / Clarify)', 'data-testid': 'decision-feedback' });
    const buttons = [];
    for (const [index, option] of p.options.entries()) {
      const word = optionWord(p, index);
      const button = h('button', {
        type: 'button',
        class: word === 'abort' ? 'danger' : word === 'continue' ? 'primary' : '',
        'data-testid': `decision-${word}`,
        onclick: () => {
          const text = feedback.value.trim();
          const asks = word === 'adjust';
          if (asks && !text) {
            feedback.focus();
            feedback.setAttribute('aria-invalid', 'true');
            return;
          }
          void decide(word, asks ? text : '', buttons);
        },
      }, option);
      buttons.push(button);
    }
    replace(sections.approval, h('div', { class: 'approval', role: 'group', 'aria-label': 'Decision needed', 'data-testid': 'approval' },
      h('h3', null, `Waiting for you · ${p.prompt.replace(/_/g, ' ')}`),
      h('p', { class: 'question' }, p.question),
      p.block ? h('pre', { class: 'status-block' }, p.block) : null,
      p.options.some((_, i) => optionWord(p, i) === 'adjust') ? feedback : null,
      h('div', { class: 'buttons' }, buttons)));
  }

  function renderStatus() {
    const last = [...state.iterations].reverse().find((it) => it.status);
    if (!last) {
      replace(sections.status, h('p', { class: 'muted' }, 'No iteration has finished yet.'));
      return;
    }
    const s = last.status;
    replace(sections.status,
      h('div', { class: 'status-summary', 'data-testid': 'status-summary', 'data-iteration': String(last.n) },
        h('span', { class: 'badge phase' }, s.phase || '?'),
        h('span', null, `iteration ${last.n}${state.config?.maxIterations ? ` of ${state.config.maxIterations}` : ''}`),
        h('span', null, `progress ${s.progress ?? 0}%`),
        h('progress', { max: '100', value: String(s.progress ?? 0) }),
        s.state_hash ? h('span', { class: 'muted' }, `hash ${s.state_hash}`) : null,
        typeof s.stagnation_count === 'number' && s.stagnation_threshold ? h('span', { class: s.stagnation_count > 1 ? 'warn' : 'muted' }, `stagnation ${s.stagnation_count}/${s.stagnation_threshold}`) : null),
      h('ul', { class: 'indicators', 'data-testid': 'indicators' }, indicatorMarks(s.indicators).map((i) =>
        h('li', { class: `ind ind-${i.mark.replace(' ', '-')}`, title: i.mark }, i.mark === 'met' ? '✓ ' : i.mark === 'skipped' ? '– ' : '✗ ', i.label))),
      s.next_action ? h('p', null, h('strong', null, 'Next: '), s.next_action) : null,
      s.block ? h('pre', { class: 'status-block', 'data-testid': 'status-block' }, s.block) : null);
  }

  function renderLoopEvents() {
    const items = [
      ...state.stagnation.map((s) => ({ seq: s.seq, el: h('div', { class: 'loop-event warn', 'data-testid': 'stagnation' },
        h('strong', null, `Stagnation (${s.reason.replace('_', ' ')}${s.period ? `, period ${s.period}` : ''}) `), `${s.count}/${s.threshold} · action: ${s.action}`,
        h('pre', { class: 'status-block' }, s.block)) })),
      ...state.diversified.map((d) => ({ seq: d.seq, el: h('div', { class: 'loop-event', 'data-testid': 'diversified' },
        h('strong', null, `Diversified: ${d.strategy} `), `attempt ${d.attempt} of ${d.max_attempts}`,
        h('p', null, d.instruction)) })),
    ].sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
    replace(sections.loopEvents, items.map((i) => i.el));
  }

  /** What an iteration without a status is: still running, or never committed (redone on resume). */
  function uncommitted(it) {
    if (!isLive(state.status)) return 'not committed (redone on resume)';
    return it.startedAt ? `running since ${clock(it.startedAt)}` : 'running';
  }

  function renderIterations() {
    if (state.iterations.length === 0) {
      replace(sections.iterations, h('p', { class: 'muted' }, 'None yet.'));
      return;
    }
    const rows = [...state.iterations].reverse().map((it) => {
      const s = it.status;
      const gate = it.gate;
      return h('details', { class: 'iteration', 'data-testid': 'iteration', 'data-iteration': String(it.n) },
        h('summary', null,
          h('span', { class: 'it-n' }, `#${it.n}`), ' ',
          s ? h('span', { class: 'badge phase' }, s.phase) : h('span', { class: 'muted' }, uncommitted(it)), ' ',
          s ? `${s.progress}%` : '', ' ',
          gate ? h('span', { class: `gate gate-${gate.decision}`, 'data-testid': 'gate' }, gate.decision.toUpperCase()) : null, ' ',
          it.decisions.map((d) => h('span', { class: 'badge decision' }, `${d.choice ?? d.decision}${d.source ? ` (${d.source})` : ''}`))),
        gate?.reason ? h('p', null, h('strong', null, 'Gate: '), gate.reason, gate.feedback ? ` — ${gate.feedback}` : '') : null,
        gate?.signal ? h('p', null, h('strong', null, 'Exit signal: '), `${gate.signal.source}: ${gate.signal.reason}${gate.signal.accepted ? '' : ` (not taken${gate.signal.rejected ? `: ${gate.signal.rejected}` : ''})`}`) : null,
        it.decisions.filter((d) => d.feedback).map((d) => h('p', null, h('strong', null, 'Feedback: '), d.feedback)),
        s?.block ? h('pre', { class: 'status-block' }, s.block) : null);
    });
    replace(sections.iterations, rows);
  }

  function renderComplete() {
    const c = state.complete;
    const r = state.result;
    if (!c && !r) {
      sections.complete.replaceChildren();
      return;
    }
    replace(sections.complete, h('div', { class: 'complete', 'data-testid': 'run-complete' },
      h('h3', null, `Ended: ${(c?.status ?? r?.status ?? '').replace(/_/g, ' ')}`),
      h('p', null, c?.reason ?? r?.reason ?? ''),
      c?.resume_command ? h('p', null, 'Resume with ', h('code', null, c.resume_command)) : null,
      c?.block ? h('pre', { class: 'status-block' }, c.block) : null,
      r?.errors?.length ? h('p', { class: 'error' }, r.errors.join('; ')) : null));
  }

  function renderStream() {
    const cur = state.current;
    if (!cur) {
      currentHead.textContent = 'Current iteration';
      stream.clear();
      streamFor = null;
      return;
    }
    if (streamFor !== cur) {
      stream.clear();
      streamFor = cur;
    }
    currentHead.textContent = `Iteration ${cur.n}${cur.stopReason ? ` · turn ${cur.stopReason}` : isLive(state.status) && state.status !== 'awaiting_decision' ? ' · live' : ''}`;
    stream.update(cur.blocks);
  }

  /** What the iterations list shows: it is redrawn (closing what the user opened) only when this changes. */
  function iterationsKey() {
    return JSON.stringify([isLive(state.status), state.iterations.map((it) => [it.n, it.status?.phase, it.status?.progress, it.status?.block, it.gate?.decision, it.decisions.length, it.startedAt])]);
  }

  function render() {
    renderHead();
    renderBudgets();
    renderApproval();
    const last = [...state.iterations].reverse().find((it) => it.status);
    redraw(sections.status, JSON.stringify([last?.n, last?.status]), renderStatus);
    redraw(sections.loopEvents, `${state.stagnation.length}/${state.diversified.length}`, renderLoopEvents);
    redraw(sections.iterations, iterationsKey(), renderIterations);
    renderStream();
    redraw(sections.complete, JSON.stringify([state.complete?.seq, state.result?.seq]), renderComplete);
    onChange?.(state);
  }

  // Budgets count down while nothing else happens.
  const ticker = setInterval(() => {
    if (isLive(state.status)) schedule();
  }, 1000);

  void (async () => {
    try {
      applyRunSnapshot(state, await api('GET', `/runs/${encodeURIComponent(id)}`));
    } catch (err) {
      error = err.status === 404 ? `No run ${id}.` : `Could not load the run: ${err.message}`;
      schedule();
      if (err.status === 404) return;
    }
    if (disposed) return;
    schedule();
    socket = openEvents(`/ws/runs/${encodeURIComponent(id)}`, (ev) => {
      applyRunEvent(state, ev);
      schedule();
    }, (reason) => {
      socket = null;
      if (reason && isLive(state.status)) error = `Live events ended: ${reason}`;
      schedule();
    });
  })();

  return () => {
    disposed = true;
    clearInterval(ticker);
    socket?.close();
  };
}
