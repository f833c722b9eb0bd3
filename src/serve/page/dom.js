/**
 * The page's one way to make elements. Text always goes in as text nodes (`append` of a string),
 * never as HTML: model output, tool output and task text are shown exactly as written and can
 * never become markup or script. Attributes are set one by one; none of them is a URL.
 */

/**
 * `h('div', {class: 'x', onclick: fn, 'data-testid': 'y'}, 'text', child, [more])`.
 * `null`, `undefined` and `false` children and attributes are skipped.
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.className = String(value);
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'value') el.value = String(value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

/** Appends children (strings as text nodes, nested arrays flattened). */
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** Replaces everything inside `el`. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** Pretty JSON of tool arguments (text, never markup). */
export function jsonText(value) {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, null, 2) ?? '';
  } catch {
    return String(value);
  }
}

/** "15:04:05" of an ISO time, or "". */
export function clock(iso) {
  const t = typeof iso === 'string' ? Date.parse(iso) : NaN;
  return Number.isFinite(t) ? new Date(t).toTimeString().slice(0, 8) : '';
}
