/**
 * Talking to `navi serve` from the page: JSON over fetch and event sockets. The server always
 * has a token and wants `Authorization: Bearer …` on every request. A browser cannot set headers
 * on a WebSocket and a token in a URL lands in logs, so a socket first gets a single-use ticket
 * from POST /ws-tickets (with the header) and names it in its subprotocol list
 * (`navi.ticket.<t>`), as docs/serve-api.md says. The token comes from the address navi serve
 * printed (`/#token=…`, taken and cleared from the address bar at once: takeTokenFromAddress) or
 * is pasted once, and is kept in sessionStorage (gone with the tab).
 */

const TOKEN_KEY = 'navi.token';
/** The subprotocol every socket offers; the server selects it. */
export const SOCKET_PROTOCOL = 'navi.v1';
const TICKET_PROTOCOL_PREFIX = 'navi.ticket.';

/** A failed request: the server's `{error:{code,message}}` or what went wrong on the way. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function getToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? '';
  } catch {
    return '';
  }
}

export function setToken(token) {
  try {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // Storage refused (private mode): the token lasts as long as this page instead.
  }
  memoryToken = token;
}

let memoryToken = '';

/**
 * The sign-in address `http://host:port/#token=T`: keeps T and replaces the address with the
 * same one without the fragment, so the token does not stay in the address bar or in the tab's
 * history (the fragment itself never reached the server). True when a token was taken.
 */
export function takeTokenFromAddress() {
  const m = /^#token=([^&]+)/.exec(location.hash);
  if (!m) return false;
  let token;
  try {
    token = decodeURIComponent(m[1]).trim();
  } catch {
    token = '';
  }
  history.replaceState(null, '', `${location.pathname}${location.search}`);
  if (!token) return false;
  setToken(token);
  return true;
}

function currentToken() {
  return getToken() || memoryToken;
}

/** Called when the server answers 401: the page asks for the token, then retries. */
let onUnauthorized = async () => false;

export function setUnauthorizedHandler(fn) {
  onUnauthorized = fn;
}

/** The `{error:{code,message}}` of a failed response, or a message from its status. */
async function errorOf(res) {
  let code = `http_${res.status}`;
  let message = `${res.status} ${res.statusText}`.trim();
  try {
    const body = await res.json();
    if (body && typeof body === 'object' && body.error && typeof body.error === 'object') {
      if (typeof body.error.code === 'string') code = body.error.code;
      if (typeof body.error.message === 'string') message = body.error.message;
    }
  } catch {
    // Not JSON: the status says enough.
  }
  return new ApiError(res.status, code, message);
}

/** A JSON request to the server; retries once after the user gave a token for a 401. */
export async function api(method, path, body) {
  for (let attempt = 0; ; attempt++) {
    const headers = { accept: 'application/json' };
    const token = currentToken();
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res;
    try {
      res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (err) {
      throw new ApiError(0, 'unreachable', `navi serve cannot be reached (${err instanceof Error ? err.message : String(err)})`);
    }
    if (res.status === 401 && attempt === 0 && (await onUnauthorized())) continue;
    if (!res.ok) throw await errorOf(res);
    if (res.status === 204) return null;
    const text = await res.text();
    return text ? JSON.parse(text) : null;
  }
}

/** The list inside a list answer (`[...]` or `{runs: [...]}` / `{sessions: [...]}` / `{items: [...]}`). */
export function listOf(answer, key) {
  if (Array.isArray(answer)) return answer;
  if (answer && typeof answer === 'object') {
    if (Array.isArray(answer[key])) return answer[key];
    if (Array.isArray(answer.items)) return answer.items;
  }
  return [];
}

/** The subprotocols of a new socket: ours, and a fresh ticket (POST /ws-tickets asks for the token if the page has none). */
async function socketProtocols() {
  const { ticket } = await api('POST', '/ws-tickets', {});
  return [SOCKET_PROTOCOL, `${TICKET_PROTOCOL_PREFIX}${ticket}`];
}

/**
 * Opens `/ws/...` and calls `onEvent` with every parsed message in order. `onClose(reason)` runs
 * once when the socket ends (or could not open). Returns `{send, close}` at once; `send` is
 * false until the socket is open.
 */
export function openEvents(path, onEvent, onClose) {
  const url = new URL(path, location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  let ws = null;
  let closed = false;
  const end = (reason) => {
    if (closed) return;
    closed = true;
    onClose(reason);
  };
  socketProtocols().then((protocols) => {
    if (closed) return;
    ws = new WebSocket(url.href, protocols);
    ws.addEventListener('message', (msg) => {
      let ev;
      try {
        ev = JSON.parse(typeof msg.data === 'string' ? msg.data : '');
      } catch {
        return;
      }
      if (ev && typeof ev === 'object') onEvent(ev);
    });
    ws.addEventListener('close', (e) => end(e.code === 1000 ? '' : e.reason || `closed (${e.code})`));
  }, (err) => end(err instanceof Error ? err.message : String(err)));
  return {
    send(obj) {
      if (!ws || ws.readyState !== WebSocket.OPEN) return false;
      ws.send(JSON.stringify(obj));
      return true;
    },
    close() {
      closed = true;
      ws?.close(1000);
    },
  };
}
