/**
 * Slack's incoming-webhook shape: `text` (the notification and fallback line) plus Block Kit
 * `blocks` — a header (plain text, at most 150 characters), a section of facts and one with the
 * status block (mrkdwn, at most 3000 characters each), and the link. mrkdwn needs `&`, `<` and
 * `>` escaped, or task text could turn into links and mentions.
 */
import { clip, fenced, notifyFacts, notifyTitle, type NotifyEvent } from './notify-event.js';

const HEADER_MAX = 150;
const SECTION_MAX = 3000;

/** Text made safe for mrkdwn. */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The Slack payload of an event. */
export function slackPayload(ev: NotifyEvent): Record<string, unknown> {
  const title = notifyTitle(ev);
  const facts = notifyFacts(ev)
    .map(([k, v]) => `*${k}:* ${slackEscape(v)}`)
    .join('\n');
  const blocks: Array<Record<string, unknown>> = [
    { type: 'header', text: { type: 'plain_text', text: clip(title, HEADER_MAX) } },
    { type: 'section', text: { type: 'mrkdwn', text: clip(facts, SECTION_MAX) } },
  ];
  if (ev.status_block !== null && ev.status_block.trim() !== '') {
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: fenced(slackEscape(ev.status_block), SECTION_MAX) } });
  }
  if (ev.link !== null) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `<${ev.link}|Open the run in navi serve>` } });
  return { text: slackEscape(title), blocks };
}
