/**
 * What a loop tells its user, and navi's own JSON for it (the `generic` shape). Three kinds,
 * most urgent first (issue 19): `waiting` — a person must answer (an approval prompt, the
 * stagnation menu, max iterations); `failed` — the run stopped without doing its task and needs
 * looking at; `finished` — it ended (completed, or stopped by its user). The Slack and Discord
 * shapes are built from the same event and the same title.
 */
import { NOTIFY_EVENTS, type NotifyEventKind } from '../config/notify-schema.js';

/** Version of the generic payload (a receiver can tell what it parses). */
export const NOTIFY_SCHEMA = 'navi.notify/1';

/** One notification. */
export interface NotifyEvent {
  kind: NotifyEventKind;
  run_id: string;
  task_name: string;
  /** The task's prompt. */
  task: string;
  /** The iteration it is about (null before the first). */
  iteration: number | null;
  max_iterations: number | null;
  /** `waiting`: which menu (approval, completion, stagnation, max_iterations), its question and options. */
  prompt?: string;
  question?: string;
  options?: string[];
  /** `failed` / `finished`: the run's status (completed, incomplete, aborted, …), why, and navi's exit code. */
  outcome?: string;
  reason?: string;
  exit_code?: number;
  /** One line for the user when it did not succeed. */
  message?: string | null;
  resume_command?: string;
  /** The last NAVIGATOR_STATUS block (or the menu's block), as the terminal shows it. */
  status_block: string | null;
  /** The run's page on `navi serve`, when there is one. */
  link: string | null;
  /** When it happened (ISO 8601). */
  at: string;
}

/** 0 is the most urgent. */
export function urgencyRank(kind: NotifyEventKind): number {
  return NOTIFY_EVENTS.indexOf(kind);
}

/** How urgent, in words a receiver can route on. */
export function urgencyWord(kind: NotifyEventKind): 'high' | 'medium' | 'low' {
  return kind === 'waiting' ? 'high' : kind === 'failed' ? 'medium' : 'low';
}

/** One line saying what happened, leading with who must act. */
export function notifyTitle(ev: NotifyEvent): string {
  const task = ev.task_name;
  if (ev.kind === 'waiting') return `navi is waiting for you: ${ev.question ?? 'a decision'} (${task})`;
  const how = [ev.outcome, ev.reason].filter((x) => x !== undefined && x !== '').join(': ');
  const code = ev.exit_code === undefined ? '' : `, exit ${ev.exit_code}`;
  return ev.kind === 'failed' ? `navi loop failed: ${task} (${how}${code})` : `navi loop finished: ${task} (${how}${code})`;
}

/** The facts every shape lists, label and value, in reading order. */
export function notifyFacts(ev: NotifyEvent): Array<[string, string]> {
  const facts: Array<[string, string]> = [['Task', ev.task_name], ['Run', ev.run_id]];
  if (ev.iteration !== null) facts.push(['Iteration', ev.max_iterations === null ? String(ev.iteration) : `${ev.iteration}/${ev.max_iterations}`]);
  if (ev.options !== undefined) facts.push(['Options', ev.options.join(' / ')]);
  if (ev.outcome !== undefined) facts.push(['Outcome', ev.reason === undefined ? ev.outcome : `${ev.outcome} (${ev.reason})`]);
  if (ev.exit_code !== undefined) facts.push(['Exit code', String(ev.exit_code)]);
  if (typeof ev.message === 'string' && ev.message !== '') facts.push(['Why', ev.message]);
  if (ev.resume_command !== undefined) facts.push(['Resume', ev.resume_command]);
  return facts;
}

/** navi's own JSON: every field of the event, plus its urgency and title. */
export function genericPayload(ev: NotifyEvent): Record<string, unknown> {
  return {
    schema: NOTIFY_SCHEMA,
    event: ev.kind,
    urgency: urgencyWord(ev.kind),
    title: notifyTitle(ev),
    run_id: ev.run_id,
    task_name: ev.task_name,
    task: ev.task,
    iteration: ev.iteration,
    max_iterations: ev.max_iterations,
    ...(ev.prompt !== undefined ? { prompt: ev.prompt, question: ev.question ?? null, options: ev.options ?? [] } : {}),
    ...(ev.outcome !== undefined ? { outcome: ev.outcome, reason: ev.reason ?? null, exit_code: ev.exit_code ?? null, message: ev.message ?? null } : {}),
    ...(ev.resume_command !== undefined ? { resume_command: ev.resume_command } : {}),
    status_block: ev.status_block,
    link: ev.link,
    at: ev.at,
  };
}

/** `text` cut to `max` characters, saying so. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** `text` inside a code fence (Slack, Discord), within `max` characters: a fence in the text would end it early. */
export function fenced(text: string, max: number): string {
  // The fence and its newlines take 8 characters of the budget.
  return '```\n' + clip(text.replace(/```/g, "'''"), max - 8) + '\n```';
}
