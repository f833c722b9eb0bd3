/**
 * A chat session as the page shows it: the display buffer from `GET /sessions/{id}` (never the
 * compressed context) followed by the live turn folded from schema-v1 events. Pure, tested in
 * Node (test/serve-page/session-model.unit.test.ts).
 */

/**
 * @typedef {{role: string, text: string, thinking: string, toolCalls: Array<{name: string, arguments: unknown}>, toolName: string}} DisplayMessage
 * @typedef {{kind: string, text?: string, callId?: string, name?: string, arguments?: unknown, ok?: boolean | null, output?: string}} LiveBlock
 * @typedef {{id: string, profile: string, model: string, status: string, messages: DisplayMessage[],
 *   live: {user: string | null, blocks: LiveBlock[], done: boolean, stopReason?: string} | null,
 *   lastSeq: number, error: string | null, fellBehind: boolean}} SessionState
 */

/**
 * A fresh session state.
 * @param {string} id
 * @returns {SessionState}
 */
export function emptySession(id) {
  return { id, profile: '', model: '', status: 'idle', messages: [], live: null, lastSeq: -1, error: null, fellBehind: false };
}

/** The text of a stored message's content (a string, or parts with `text`). */
export function contentText(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p && typeof p === 'object' && typeof p.text === 'string' ? p.text : '')).join('');
  return '';
}

/** One display entry from a stored message: role, text and tool calls. */
export function displayMessage(m) {
  const role = typeof m.role === 'string' ? m.role : 'assistant';
  const toolCalls = Array.isArray(m.tool_calls)
    ? m.tool_calls.map((c) => {
        const fn = c && typeof c === 'object' && c.function && typeof c.function === 'object' ? c.function : c;
        return { name: String(fn?.name ?? 'tool'), arguments: fn?.arguments };
      })
    : [];
  return {
    role,
    text: contentText(m.content),
    thinking: typeof m.thinking === 'string' ? m.thinking : '',
    toolCalls,
    toolName: typeof m.tool_name === 'string' ? m.tool_name : typeof m.name === 'string' ? m.name : '',
  };
}

/**
 * Replaces the stored part with `GET /sessions/{id}`'s answer.
 * @param {SessionState} state
 * @param {any} session
 * @returns {SessionState}
 */
export function applySessionSnapshot(state, session) {
  if (!session || typeof session !== 'object') return state;
  if (typeof session.profile === 'string') state.profile = session.profile;
  if (typeof session.model === 'string') state.model = session.model;
  if (typeof session.status === 'string') state.status = session.status;
  const messages = Array.isArray(session.messages) ? session.messages : [];
  state.messages = messages.filter((m) => m && typeof m === 'object').map(displayMessage);
  return state;
}

/** The live turn, started when missing. */
function liveTurn(state) {
  if (!state.live) state.live = { user: null, blocks: [], done: false };
  return state.live;
}

/**
 * Folds one event of `/ws/sessions/{id}` into `state` (mutates and returns it).
 * @param {SessionState} state
 * @param {Record<string, any>} ev
 * @returns {SessionState}
 */
export function applySessionEvent(state, ev) {
  if (typeof ev.seq === 'number') {
    if (ev.seq <= state.lastSeq && ev.type !== 'run_started') return state;
    state.lastSeq = ev.seq;
  }
  if (ev.type === 'serve_fell_behind') {
    state.fellBehind = true;
    return state;
  }
  if (ev.type === 'serve_error') {
    state.error = typeof ev.error?.message === 'string' ? ev.error.message : 'the server refused that';
    if (state.live && !state.live.done && state.live.blocks.length === 0) state.status = 'idle';
    return state;
  }
  if (ev.is_subagent === true) return state;
  switch (ev.type) {
    case 'run_started': {
      // A new turn: what the previous one said is part of the conversation now.
      if (state.live && state.live.done) finishLive(state);
      liveTurn(state);
      state.status = 'running';
      state.error = null;
      return state;
    }
    case 'thinking_delta':
    case 'text_delta': {
      const live = liveTurn(state);
      const kind = ev.type === 'thinking_delta' ? 'thinking' : 'text';
      const last = live.blocks[live.blocks.length - 1];
      if (last && last.kind === kind) last.text += ev.text;
      else live.blocks.push({ kind, text: ev.text });
      return state;
    }
    case 'tool_started':
      liveTurn(state).blocks.push({ kind: 'tool', callId: ev.call_id, name: ev.name, arguments: ev.arguments, ok: null, output: '' });
      return state;
    case 'tool_call': {
      const live = liveTurn(state);
      const tool = live.blocks.find((b) => b.kind === 'tool' && b.callId === ev.call_id && b.ok === null);
      if (tool) Object.assign(tool, { ok: ev.ok, output: ev.output });
      else live.blocks.push({ kind: 'tool', callId: ev.call_id, name: ev.name, arguments: ev.arguments, ok: ev.ok, output: ev.output });
      return state;
    }
    case 'error':
      state.error = ev.message;
      return state;
    case 'stream_end':
      liveTurn(state).done = true;
      liveTurn(state).stopReason = ev.stop_reason;
      return state;
    case 'result':
      if (state.live) state.live.done = true;
      state.status = 'idle';
      if (ev.status !== 'success' && Array.isArray(ev.errors) && ev.errors.length > 0) state.error = ev.errors.join('; ');
      return state;
    default:
      return state;
  }
}

/** Moves a finished live turn into `messages` (as the display buffer will hold it). */
function finishLive(state) {
  const live = state.live;
  if (!live) return;
  if (live.user) state.messages.push({ role: 'user', text: live.user, thinking: '', toolCalls: [], toolName: '' });
  const text = live.blocks.filter((b) => b.kind === 'text').map((b) => b.text).join('');
  const thinking = live.blocks.filter((b) => b.kind === 'thinking').map((b) => b.text).join('');
  const toolCalls = live.blocks.filter((b) => b.kind === 'tool').map((b) => ({ name: b.name, arguments: b.arguments }));
  state.messages.push({ role: 'assistant', text, thinking, toolCalls, toolName: '' });
  state.live = null;
}

/** Records the user's message of a turn the page itself started. */
export function noteUserMessage(state, content) {
  if (state.live && state.live.done) finishLive(state);
  const live = liveTurn(state);
  live.user = content;
  state.status = 'running';
  return state;
}
