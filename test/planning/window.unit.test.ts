import { describe, expect, it } from 'vitest';
import { planningWindow } from '../../src/agent/planning/window.js';
import type { ChatMessage } from '../../src/llm/types.js';

const task = 'Migrate the user table to the new schema and keep every existing row.';

/** A long session: ~60k chars of user/assistant/tool traffic after the task. */
function longConversation(): ChatMessage[] {
  const messages: ChatMessage[] = [
    { role: 'system', content: 'SYSTEM PROMPT '.repeat(100) },
    { role: 'user', content: task },
  ];
  for (let i = 0; i < 60; i++) {
    messages.push({ role: 'assistant', content: `turn ${i}: looking at part ${i}`, tool_calls: [{ name: 'read_file', arguments: { path: `src/part-${i}.ts` } }] });
    messages.push({ role: 'tool', tool_name: 'read_file', content: `content of part ${i} `.repeat(50) });
    messages.push({ role: 'user', content: `note ${i}: ${'x'.repeat(80)}` });
  }
  messages.push({ role: 'user', content: 'LATEST: now plan the migration' });
  return messages;
}

describe('planningWindow', () => {
  it('pins the task, keeps the most recent messages within ~20k chars of a 60k conversation', () => {
    const conversation = longConversation();
    const total = conversation.reduce((n, m) => n + m.content.length, 0);
    expect(total).toBeGreaterThan(60_000);

    const window = planningWindow(conversation, task);
    expect(window.length).toBeLessThanOrEqual(20_000);
    expect(window.length).toBeGreaterThan(18_000);
    expect(window.startsWith(`ORIGINAL TASK:\n${task}`)).toBe(true);
    expect(window.trimEnd().endsWith('USER: LATEST: now plan the migration')).toBe(true);
    expect(window).not.toContain('turn 0:');
    expect(window).toContain('turn 59:');
    expect(window).toMatch(/\[\d+ earlier message\(s\) omitted\]/);
    // The task appears once: pinned, not repeated as a conversation message.
    expect(window.split(task)).toHaveLength(2);
  });

  it('skips system messages and drops reasoning', () => {
    const window = planningWindow(
      [
        { role: 'system', content: 'You are navi.' },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello', thinking: 'SECRET REASONING' },
      ],
      'do it',
    );
    expect(window).not.toContain('You are navi.');
    expect(window).not.toContain('SECRET REASONING');
    expect(window).toBe('ORIGINAL TASK:\ndo it\n\nCONVERSATION (oldest first):\nUSER: hi\n\nASSISTANT: hello');
  });

  it('renders tool calls and tool results compactly', () => {
    const window = planningWindow(
      [
        { role: 'assistant', content: '', tool_calls: [{ name: 'shell', arguments: { command: 'npm test' } }] },
        { role: 'tool', tool_name: 'shell', content: 'FAIL '.repeat(1000) },
      ],
      't',
    );
    expect(window).toContain('ASSISTANT:\n-> shell({"command":"npm test"})');
    expect(window).toMatch(/TOOL RESULT shell \(4999 chars\): (FAIL ){80}…/);
    expect(window.length).toBeLessThan(600);
  });

  it('keeps a task longer than half the window as head and tail', () => {
    const longTask = `START ${'a'.repeat(30_000)} END`;
    const window = planningWindow([{ role: 'user', content: 'recent question' }], longTask);
    expect(window.length).toBeLessThanOrEqual(20_000);
    expect(window).toContain('START');
    expect(window).toContain('END');
    expect(window).toMatch(/chars omitted/);
    expect(window).toContain('USER: recent question');
  });

  it('cuts the newest message rather than dropping it when it alone is too big', () => {
    const window = planningWindow([{ role: 'user', content: `BIG ${'z'.repeat(50_000)} TAIL` }], 'task', 5000);
    expect(window.length).toBeLessThanOrEqual(5100);
    expect(window).toContain('USER: BIG');
  });

  it('returns the pinned task alone for an empty conversation', () => {
    expect(planningWindow([], '  fix it  ')).toBe('ORIGINAL TASK:\nfix it');
  });
});
