/**
 * A chat over one session: the stored display buffer, then the live turn from /ws/sessions/{id}.
 * A message starts a turn over the socket (`{type:"message"}`, as seed 001) or, when the socket is
 * down, with POST /sessions/{id}/messages; Stop sends `{type:"stop"}` / POST …/stop.
 */
import { api, openEvents } from './api.js';
import { h, jsonText, replace } from './dom.js';
import { applySessionEvent, applySessionSnapshot, emptySession, noteUserMessage } from './session-model.js';
import { streamView } from './stream-view.js';

function messageElement(m) {
  if (m.role === 'tool') {
    return h('details', { class: 'msg msg-tool', 'data-testid': 'message', 'data-role': 'tool' },
      h('summary', null, `tool result${m.toolName ? `: ${m.toolName}` : ''}`), h('pre', null, m.text));
  }
  return h('div', { class: `msg msg-${m.role}`, 'data-testid': 'message', 'data-role': m.role },
    h('div', { class: 'msg-role' }, m.role),
    m.thinking ? h('details', { class: 'thinking' }, h('summary', null, 'thinking'), h('div', { class: 'block-text' }, m.thinking)) : null,
    m.text ? h('div', { class: 'msg-text' }, m.text) : null,
    m.toolCalls.map((c) => h('details', { class: 'block tool' }, h('summary', null, h('span', { class: 'tool-name' }, c.name)), h('pre', { class: 'tool-args' }, jsonText(c.arguments)))));
}

/** Shows session `id` inside `mount`; returns a function that tears it down. */
export function showSession(mount, id) {
  const state = emptySession(id);
  const head = h('div', { class: 'run-head' });
  const list = h('div', { class: 'messages', 'data-testid': 'messages' });
  const liveUser = h('div');
  const live = streamView('session-stream');
  const notice = h('div', { class: 'notice-area' });
  const input = h('textarea', { rows: '3', placeholder: 'Message (Ctrl+Enter sends)', 'data-testid': 'chat-input', 'aria-label': 'Message' });
  const send = h('button', { type: 'submit', class: 'primary', 'data-testid': 'chat-send' }, 'Send');
  const stop = h('button', { type: 'button', class: 'danger', 'data-testid': 'chat-stop' }, 'Stop');
  const form = h('form', { class: 'composer' }, input, h('div', { class: 'buttons' }, send, stop));
  let shown = 0;
  let liveFor = null;
  let socket = null;
  let error = '';
  let scheduled = false;
  let disposed = false;

  replace(mount, h('section', { class: 'session', 'data-testid': 'session-view', 'data-session-id': id }, head, list, liveUser, live.el, notice, form));

  function schedule() {
    if (scheduled || disposed) return;
    scheduled = true;
    requestAnimationFrame(() => {
      scheduled = false;
      if (!disposed) render();
    });
  }

  function render() {
    const running = state.status === 'running';
    replace(head, h('h2', null, `Session ${id.slice(0, 8)}`),
      h('span', { class: `badge status-${state.status}`, 'data-testid': 'session-status' }, state.status),
      state.profile ? h('span', { class: 'badge' }, state.profile) : null,
      state.model ? h('span', { class: 'muted' }, state.model) : null);
    if (state.messages.length < shown) {
      list.replaceChildren();
      shown = 0;
    }
    for (; shown < state.messages.length; shown++) list.append(messageElement(state.messages[shown]));
    if (state.live !== liveFor) {
      live.clear();
      liveFor = state.live;
    }
    replace(liveUser, state.live?.user ? messageElement({ role: 'user', text: state.live.user, thinking: '', toolCalls: [] }) : null);
    live.update(state.live ? state.live.blocks : []);
    send.disabled = running;
    stop.disabled = !running;
    replace(notice, error ? h('p', { class: 'error', role: 'alert' }, error) : null, state.error ? h('p', { class: 'error' }, state.error) : null,
      state.fellBehind ? h('p', { class: 'error' }, 'This page fell behind. ', h('button', { type: 'button', onclick: () => location.reload() }, 'Reload')) : null);
  }

  async function submit() {
    const content = input.value.trim();
    if (!content || state.status === 'running') return;
    error = '';
    noteUserMessage(state, content);
    input.value = '';
    schedule();
    if (socket?.send({ type: 'message', content })) return;
    try {
      await api('POST', `/sessions/${encodeURIComponent(id)}/messages`, { content });
    } catch (err) {
      error = err.status === 409 ? 'A turn is already running.' : `Not sent: ${err.message}`;
      state.status = 'idle';
      schedule();
    }
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void submit();
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      void submit();
    }
  });
  stop.addEventListener('click', () => {
    if (socket?.send({ type: 'stop' })) return;
    api('POST', `/sessions/${encodeURIComponent(id)}/stop`, {}).catch((err) => {
      error = `Stop failed: ${err.message}`;
      schedule();
    });
  });

  void (async () => {
    try {
      applySessionSnapshot(state, await api('GET', `/sessions/${encodeURIComponent(id)}`));
    } catch (err) {
      error = err.status === 404 ? `No session ${id}.` : `Could not load the session: ${err.message}`;
      schedule();
      if (err.status === 404) return;
    }
    if (disposed) return;
    schedule();
    socket = openEvents(`/ws/sessions/${encodeURIComponent(id)}`, (ev) => {
      applySessionEvent(state, ev);
      schedule();
    }, (reason) => {
      socket = null;
      if (reason) error = `Live events ended: ${reason}`;
      schedule();
    });
  })();

  return () => {
    disposed = true;
    socket?.close();
  };
}
