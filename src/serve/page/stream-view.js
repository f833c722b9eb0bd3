/**
 * The live part of a turn: thinking, text and tool calls as they stream. Re-rendering a block
 * list from scratch on every delta would reset scrolling and cost O(n²) on long answers, so this
 * keeps one element per block and only appends the new characters to the last text node.
 */
import { h, jsonText } from './dom.js';

/** An element showing `blocks`, updated in place by `update(blocks)`. */
export function streamView(testid) {
  const root = h('div', { class: 'stream', 'data-testid': testid });
  /** Per block: its element, the text node streamed into, and how much of the text it holds. */
  let rendered = [];

  function toolElement(block) {
    const state = block.ok === null || block.ok === undefined ? 'running' : block.ok ? 'ok' : 'failed';
    const el = h(
      'details',
      { class: `block tool tool-${state}`, 'data-testid': 'tool-call', 'data-state': state },
      h('summary', null, h('span', { class: 'tool-name' }, block.name), ' ', h('span', { class: 'tool-state' }, state === 'running' ? 'running…' : state === 'ok' ? 'ok' : 'failed'),
        typeof block.durationMs === 'number' ? h('span', { class: 'muted' }, ` ${Math.round(block.durationMs)} ms`) : null),
      h('pre', { class: 'tool-args' }, jsonText(block.arguments)),
      block.output ? h('pre', { class: 'tool-output' }, block.output, block.truncated ? '\n… (shortened)' : '') : null,
    );
    return el;
  }

  function textElement(block) {
    const label = block.kind === 'thinking' ? 'thinking' : block.kind === 'text' ? null : block.code ? `${block.kind}: ${block.code}` : block.kind;
    const node = document.createTextNode(block.text);
    const el = h('div', { class: `block ${block.kind}`, 'data-testid': `stream-${block.kind}` }, label ? h('div', { class: 'block-label' }, label) : null, h('div', { class: 'block-text' }, node));
    return { el, node };
  }

  function make(block) {
    if (block.kind === 'tool') return { el: toolElement(block), node: null, len: 0, sig: toolSig(block) };
    const { el, node } = textElement(block);
    return { el, node, len: block.text.length, sig: block.kind };
  }

  function toolSig(block) {
    return `${block.callId}:${String(block.ok)}:${block.output?.length ?? 0}`;
  }

  function update(blocks) {
    if (blocks.length < rendered.length) {
      root.replaceChildren();
      rendered = [];
    }
    blocks.forEach((block, i) => {
      const r = rendered[i];
      if (!r) {
        const made = make(block);
        rendered.push(made);
        root.append(made.el);
        return;
      }
      if (block.kind === 'tool') {
        const sig = toolSig(block);
        if (sig !== r.sig) {
          const fresh = make(block);
          // Keep a tool call the user opened open.
          if (r.el.open) fresh.el.open = true;
          r.el.replaceWith(fresh.el);
          rendered[i] = fresh;
        }
        return;
      }
      if (r.node && block.text.length > r.len) {
        r.node.appendData(block.text.slice(r.len));
        r.len = block.text.length;
      }
    });
  }

  function clear() {
    root.replaceChildren();
    rendered = [];
  }

  return { el: root, update, clear };
}
