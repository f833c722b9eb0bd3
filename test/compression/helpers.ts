/** Message builders and a seeded PRNG for the compression tests. */
import type { ChatMessage } from '../../src/llm/types.js';

export const user = (content: string): ChatMessage => ({ role: 'user', content });
export const reply = (content: string): ChatMessage => ({ role: 'assistant', content });
export const call = (...names: string[]): ChatMessage => ({
  role: 'assistant',
  content: '',
  tool_calls: names.map((name, i) => ({ id: `c${i}`, name, arguments: { path: `f${i}.txt` } })),
});
export const result = (name: string, content: string): ChatMessage => ({ role: 'tool', tool_name: name, content });

/** A user turn, one assistant message calling each named tool, their results, a final reply: n + 3 messages. */
export function exchange(task: string, names: string[], output = 'ok'): ChatMessage[] {
  return [user(task), call(...names), ...names.map((n) => result(n, output)), reply(`done: ${task}`)];
}

/** mulberry32: deterministic, so a failing long-session run can be replayed. */
export function prng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n: number): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/** Text of about `n` chars that is not one repeated character (so head and tail differ). */
export function text(n: number, tag = 'x'): string {
  const unit = `${tag} 0123456789 abcdefghij `;
  return unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
}

/**
 * Structural checks every request must pass: user-first (after the system prompt), every tool
 * result inside the group of the assistant call that produced it (as many results as calls),
 * and no two user or two assistant turns in a row.
 */
export function wellFormedProblems(request: readonly ChatMessage[]): string[] {
  const problems: string[] = [];
  const msgs = request.filter((m) => m.role !== 'system');
  if (msgs[0] && msgs[0].role !== 'user') problems.push(`first message is ${msgs[0].role}`);
  let openCalls = 0;
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i] as ChatMessage;
    const prev = msgs[i - 1];
    if (m.role === 'tool') {
      if (openCalls <= 0) problems.push(`tool result at ${i} without a pending call`);
      openCalls--;
      continue;
    }
    if (openCalls > 0) problems.push(`group before ${i} has ${openCalls} call(s) without results`);
    if (prev && prev.role === m.role) problems.push(`${m.role} → ${m.role} at ${i}`);
    openCalls = m.role === 'assistant' ? (m.tool_calls?.length ?? 0) : 0;
  }
  return problems;
}
