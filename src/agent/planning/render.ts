/**
 * Pure renderings of planning data: what the model reads (analysis for Phase 3, re-plan context,
 * the injected plan) and the tool's follow-up instruction.
 */
import type { ScratchpadEntry, TodoItem } from '../../tools/types.js';
import type { Analysis, Complexity, Executor, PlanStep } from './types.js';

/** One scratchpad value in a re-plan: a note's gist, not its whole body. */
const FINDING_CHARS = 600;

/** All findings and errors together; the re-plan request must stay small for local prefill. */
const FINDINGS_TOTAL_CHARS = 4000;

/** Tool result of the plan tool (seed 000: "Tool result = follow-up instruction"). */
export const FOLLOW_UP = {
  complex: 'Plan ready (complex). Present the plan to the user briefly and wait for their confirmation before executing.',
  proceed: 'Plan ready. Proceed with step 1.',
  subagent: 'Plan is ready. Execute it now.',
} as const;

/** The follow-up for a finished plan: sub-agents never wait; complex plans wait for the user. */
export function followUpFor(complexity: Complexity, isSubagent: boolean): string {
  if (isSubagent) return FOLLOW_UP.subagent;
  return complexity === 'complex' ? FOLLOW_UP.complex : FOLLOW_UP.proceed;
}

/** `[TOOL: read_file]`, `[AGENT: researcher]`, `[SELF]`. */
export function executorLabel(executor: Executor): string {
  switch (executor.kind) {
    case 'tool':
      return `[TOOL: ${executor.name}]`;
    case 'agent':
      return `[AGENT: ${executor.profile}]`;
    case 'self':
      return '[SELF]';
  }
}

/** The plan as injected into the conversation (an assistant message) and shown on the plan card. */
export function renderPlanText(input: { complexity: Complexity; goal: string; milestones: string[]; steps: PlanStep[] }): string {
  const lines = [`Plan (complexity: ${input.complexity})`];
  if (input.goal) lines.push(`Goal: ${input.goal}`);
  if (input.milestones.length > 0) lines.push(`Milestones: ${input.milestones.join('; ')}`);
  for (const step of input.steps) lines.push(`${step.n}. ${step.text} ${executorLabel(step.executor)}`);
  return lines.join('\n');
}

/**
 * The analysis as Phase 3 reads it: normalised sections (no markdown, no reasoning), empty ones
 * left out. `fallbackTask` stands in when the model gave no TASK line.
 */
export function renderAnalysis(analysis: Analysis, fallbackTask: string): string {
  const lines = [`TASK: ${analysis.task || fallbackTask}`];
  if (analysis.goal) lines.push(`GOAL: ${analysis.goal}`);
  const lists: [string, string[]][] = [
    ['UNKNOWNS', analysis.unknowns],
    ['RESOURCES', analysis.resources],
    ['KNOWLEDGE RULES', analysis.knowledgeRules],
    ['SUBTASKS', analysis.subtasks],
    ['COMMITMENTS', analysis.commitments],
  ];
  for (const [label, items] of lists) {
    if (items.length > 0) lines.push(`${label}:`, ...items.map((i) => `- ${i}`));
  }
  return lines.join('\n');
}

/** The current todo with statuses, for the re-plan prompt. */
export function renderTodo(todo: TodoItem[]): string {
  if (todo.length === 0) return '(empty)';
  return todo.map((t) => `${t.id}. [${t.status}] ${t.text}`).join('\n');
}

/**
 * Scratchpad findings and errors (notes are left out: the seed packs "findings/errors"), each
 * cut to a gist; when they exceed the total, the most recent are kept.
 */
export function renderFindings(entries: ScratchpadEntry[]): string {
  const lines = entries
    .filter((e) => e.kind === 'finding' || e.kind === 'error')
    .map((e) => `- [${e.kind}] ${e.key}: ${cut(e.value.replace(/\s+/g, ' ').trim(), FINDING_CHARS)}`);
  const kept: string[] = [];
  let total = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] ?? '';
    if (total + line.length > FINDINGS_TOTAL_CHARS) break;
    kept.unshift(line);
    total += line.length + 1;
  }
  return kept.length > 0 ? kept.join('\n') : '(none)';
}

/** Todo items already done: Phase 3 of a re-plan must not schedule them again. */
export function renderDone(todo: TodoItem[]): string {
  const done = todo.filter((t) => t.status === 'done').map((t) => t.text);
  return done.length > 0 ? done.join('; ') : 'none';
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
