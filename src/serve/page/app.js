/**
 * The live page of `navi serve`: the runs and sessions lists, a form to start a loop, and the
 * selected run or session (`#/runs/ID`, `#/sessions/ID`). Plain ES modules served as they are:
 * no build step, no framework, nothing fetched from anywhere but this server.
 */
import { api, getToken, listOf, setToken, setUnauthorizedHandler, takeTokenFromAddress } from './api.js';
import { clock, h, replace } from './dom.js';
import { isLive } from './run-model.js';
import { showRun } from './run-view.js';
import { showSession } from './session-view.js';

const $ = (id) => document.getElementById(id);
const LIST_REFRESH_MS = 3000;

let teardown = null;
let listError = '';

let asking = null;

/**
 * Asks for the server's token (a 401 said the page has none, or a wrong one); resolves true
 * when given. Requests refused meanwhile wait for the same answer instead of asking again.
 */
function askToken() {
  asking ??= promptToken().finally(() => {
    asking = null;
  });
  return asking;
}

function promptToken() {
  const dialog = $('token-dialog');
  const input = $('token-input');
  $('token-retry').textContent = getToken() ? 'That token was refused. ' : '';
  input.value = '';
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      const token = dialog.returnValue === 'ok' ? input.value.trim() : '';
      if (token) setToken(token);
      resolve(Boolean(token));
    }, { once: true });
  });
}

function selected() {
  const m = /^#\/(runs|sessions)\/(.+)$/.exec(location.hash);
  return m ? { kind: m[1], id: decodeURIComponent(m[2]) } : null;
}

function runItem(run, current) {
  const id = String(run.id ?? run.run_id ?? '');
  // A run stored as running whose navi is gone (killed, machine rebooted) is not running.
  const status = run.status === 'running' && run.alive === false ? 'stale' : String(run.status ?? 'unknown');
  const name = String(run.task_name ?? run.name ?? run.task ?? id);
  const iterations = typeof run.iterations === 'number' ? run.iterations : Array.isArray(run.iterations) ? run.iterations.length : run.iteration;
  return h('li', { class: current ? 'current' : '' },
    h('a', { href: `#/runs/${encodeURIComponent(id)}`, 'data-testid': 'run-link', 'data-run-id': id },
      h('span', { class: `dot status-${status}`, title: status }),
      h('span', { class: 'item-name' }, name),
      h('span', { class: 'item-meta' }, `${status.replace(/_/g, ' ')}${typeof iterations === 'number' ? ` · ${iterations}${run.max_iterations ? `/${run.max_iterations}` : ''} it.` : ''}`)));
}

function sessionItem(session, current) {
  const id = String(session.id ?? session.session_id ?? '');
  const title = String(session.title ?? session.name ?? id.slice(0, 8));
  return h('li', { class: current ? 'current' : '' },
    h('a', { href: `#/sessions/${encodeURIComponent(id)}`, 'data-testid': 'session-link', 'data-session-id': id },
      h('span', { class: `dot status-${String(session.status ?? 'idle')}` }),
      h('span', { class: 'item-name' }, title),
      h('span', { class: 'item-meta' }, [session.profile, clock(session.updated_at ?? session.created_at)].filter(Boolean).join(' · '))));
}

async function refreshLists() {
  const sel = selected();
  try {
    const [runs, sessions] = await Promise.all([api('GET', '/runs'), api('GET', '/sessions')]);
    const runList = listOf(runs, 'runs');
    // Running first, then newest (the server's order within each).
    const ordered = [...runList.filter((r) => isLive(String(r.status))), ...runList.filter((r) => !isLive(String(r.status)))];
    replace($('runs'), ordered.length ? ordered.map((r) => runItem(r, sel?.kind === 'runs' && sel.id === String(r.id ?? r.run_id))) : h('li', { class: 'muted' }, 'No loop runs yet.'));
    const sessionList = listOf(sessions, 'sessions');
    replace($('sessions'), sessionList.length ? sessionList.map((s) => sessionItem(s, sel?.kind === 'sessions' && sel.id === String(s.id ?? s.session_id))) : h('li', { class: 'muted' }, 'No sessions yet.'));
    listError = '';
  } catch (err) {
    listError = err.message;
  }
  replace($('list-error'), listError ? h('p', { class: 'error' }, listError) : null);
}

function route() {
  teardown?.();
  teardown = null;
  const sel = selected();
  const main = $('main');
  document.body.classList.toggle('has-selection', sel !== null);
  if (!sel) {
    replace(main, h('div', { class: 'empty' }, h('h2', null, 'navi'), h('p', null, 'Pick a loop run or a session, or start one.')));
  } else if (sel.kind === 'runs') {
    // The list shows each run's status too: refresh it when the shown run's status changes.
    let shownStatus = '';
    teardown = showRun(main, sel.id, (state) => {
      if (state.status === shownStatus) return;
      shownStatus = state.status;
      void refreshLists();
    });
  } else {
    teardown = showSession(main, sel.id);
  }
  void refreshLists();
}

async function startLoop(e) {
  e.preventDefault();
  const form = e.currentTarget;
  const data = new FormData(form);
  const body = { task: String(data.get('task') ?? '').trim() };
  if (!body.task) return;
  const approval = String(data.get('approval') ?? 'none');
  if (approval !== 'none') body.approval = approval;
  const max = Number(data.get('max_iterations'));
  if (Number.isInteger(max) && max > 0) body.max_iterations = max;
  const button = form.querySelector('button[type=submit]');
  button.disabled = true;
  try {
    const run = await api('POST', '/runs', body);
    replace($('start-error'));
    form.reset();
    location.hash = `#/runs/${encodeURIComponent(String(run.id ?? run.run_id))}`;
  } catch (err) {
    replace($('start-error'), h('p', { class: 'error', role: 'alert', 'data-testid': 'start-error' }, err.message));
  } finally {
    button.disabled = false;
  }
}

async function newSession() {
  try {
    const session = await api('POST', '/sessions', {});
    location.hash = `#/sessions/${encodeURIComponent(String(session.id ?? session.session_id))}`;
  } catch (err) {
    replace($('start-error'), h('p', { class: 'error', role: 'alert' }, err.message));
  }
}

// First of all: a sign-in address (`/#token=…`) leaves the address bar before anything else runs.
takeTokenFromAddress();
setUnauthorizedHandler(askToken);
$('start-loop').addEventListener('submit', (e) => void startLoop(e));
$('new-session').addEventListener('click', () => void newSession());
$('back').addEventListener('click', () => {
  location.hash = '';
});
window.addEventListener('hashchange', route);
setInterval(() => {
  if (document.visibilityState === 'visible') void refreshLists();
}, LIST_REFRESH_MS);
route();
