/**
 * The last step of every compression: the new context must fit its budget whatever the
 * summariser did and however large the kept messages are. In order, until it fits:
 * 1. cut the longest kept messages head+tail (not below ~600 chars each);
 * 2. drop the oldest kept groups, all but the last (a group is a user message, a reply, or an
 *    assistant tool call with all its results — dropped whole so no result loses its call);
 * 3. cut the remaining messages harder (not below ~120 chars each);
 * 4. drop the last group;
 * 5. cut the summary itself.
 * Steps 2–5 only matter for windows far too small for the work (or a budget squeezed by a huge
 * system prompt); a note in the summary says how many messages were dropped. A pinned message
 * (the turn's task) sits verbatim between the summary and the kept messages: never cut or dropped.
 */
import type { ChatMessage } from '../../llm/types.js';
import { CHARS_PER_TOKEN, messageChars } from '../tokens.js';
import { headTail, shrinkMessage } from './shrink.js';
import { summaryMessages } from './summary-message.js';
import { MIN_BUDGET_TOKENS } from './thresholds.js';

/** Kept messages are first cut no shorter than this: still a readable head and tail. */
const SOFT_FLOOR_CHARS = 600;
/** Then, if that was not enough, down to this. */
const HARD_FLOOR_CHARS = 120;

/** The fitted context. */
export interface FitResult {
  /** [summary, acknowledgement?, ...kept messages], within the budget. */
  context: ChatMessage[];
  /** True when anything had to be cut or dropped. */
  safetyNet: boolean;
  /** Kept messages dropped entirely (steps 2 and 4). */
  droppedMessages: number;
}

function splitGroups(messages: readonly ChatMessage[]): ChatMessage[][] {
  const groups: ChatMessage[][] = [];
  for (const m of messages) {
    const last = groups[groups.length - 1];
    if (m.role === 'tool' && last !== undefined) last.push(m);
    else groups.push([m]);
  }
  return groups;
}

function charsOf(messages: readonly ChatMessage[]): number {
  let n = 0;
  for (const m of messages) n += messageChars(m);
  return n;
}

/**
 * Builds [summary message(s), ...recent] and makes it fit `budgetTokens` (estimated at chars/3,
 * never below MIN_BUDGET_TOKENS) by the steps above. Never mutates `recent`.
 */
export function fitToBudget(summary: string, compressedMessages: number, recent: readonly ChatMessage[], budgetTokens: number, pinned?: ChatMessage): FitResult {
  const budgetChars = Math.max(MIN_BUDGET_TOKENS, Math.floor(budgetTokens)) * CHARS_PER_TOKEN;
  const groups = splitGroups(recent);
  // Cut copies point back at their original, so a second, harder cut starts from the full text.
  const originals = new Map<ChatMessage, ChatMessage>();
  let summaryText = summary;
  let dropped = 0;
  let changed = false;

  const assemble = (): ChatMessage[] => {
    const kept = groups.flat();
    const body = dropped > 0 ? `${summaryText}\n\n[${dropped} later messages were dropped to fit the context window]` : summaryText;
    const head = pinned === undefined ? [] : [pinned];
    return [...summaryMessages(body, compressedMessages, pinned ?? kept[0]), ...head, ...kept];
  };
  const excess = (): number => charsOf(assemble()) - budgetChars;

  const shrinkKept = (floor: number): void => {
    const tried = new Set<ChatMessage>();
    for (let over = excess(); over > 0; over = excess()) {
      let group: ChatMessage[] | undefined;
      let i = -1;
      let size = floor;
      for (const grp of groups) {
        for (let j = 0; j < grp.length; j++) {
          const m = grp[j] as ChatMessage;
          const s = messageChars(m);
          if (s > size && !tried.has(m)) [group, i, size] = [grp, j, s];
        }
      }
      if (group === undefined) return;
      const current = group[i] as ChatMessage;
      const original = originals.get(current) ?? current;
      const cut = shrinkMessage(original, Math.max(floor, size - over));
      tried.add(cut);
      if (messageChars(cut) >= size) {
        tried.add(current);
        continue;
      }
      originals.set(cut, original);
      group[i] = cut;
      changed = true;
    }
  };
  const dropGroups = (keepLast: number): void => {
    while (groups.length > keepLast && excess() > 0) {
      dropped += (groups.shift() as ChatMessage[]).length;
      changed = true;
    }
  };

  shrinkKept(SOFT_FLOOR_CHARS);
  dropGroups(1);
  shrinkKept(HARD_FLOOR_CHARS);
  dropGroups(0);
  const over = excess();
  if (over > 0) {
    summaryText = headTail(summaryText, Math.max(0, summaryText.length - over));
    changed = true;
  }
  return { context: assemble(), safetyNet: changed, droppedMessages: dropped };
}
