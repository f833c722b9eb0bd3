/**
 * Phrases in a prompt that switch loop mode on or off (seed 004 "When to Invoke", SPEC §6).
 * Matching is case-insensitive, tolerant of curly apostrophes and extra whitespace, and bound
 * to whole words so "loop modeling" does not trigger.
 */

/** The trigger phrases of seed 004, in its order. */
export const LOOP_TRIGGER_PHRASES = [
  'run until done',
  'keep going until complete',
  'iterate until finished',
  'loop mode',
  'autonomous mode',
  "don't stop until done",
] as const;

/** A trigger phrase. */
export type LoopTriggerPhrase = (typeof LOOP_TRIGGER_PHRASES)[number];

/** Lower case, straight apostrophes, single spaces: what the phrases are matched against. */
function normalize(text: string): string {
  return text.toLowerCase().replace(/[\u2018\u2019\u02bc`]/g, "'").replace(/\s+/g, ' ');
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const TRIGGERS: ReadonlyArray<readonly [LoopTriggerPhrase, RegExp]> = LOOP_TRIGGER_PHRASES.map(
  (p) => [p, new RegExp(`(?:^|[^a-z0-9'])${escape(p)}(?![a-z0-9])`)] as const,
);

/** "Just do this once" (and "just do it once") asks for one-shot even in a loop task. */
const JUST_ONCE = /(?:^|[^a-z0-9'])just do (?:this|it) once(?![a-z0-9])/;

/** The first trigger phrase the prompt carries, or null. */
export function detectLoopTrigger(prompt: string): LoopTriggerPhrase | null {
  const text = normalize(prompt);
  for (const [phrase, pattern] of TRIGGERS) if (pattern.test(text)) return phrase;
  return null;
}

/** True when the prompt says "just do this once": run one-shot, not in loop mode. */
export function isJustOnce(prompt: string): boolean {
  return JUST_ONCE.test(normalize(prompt));
}
