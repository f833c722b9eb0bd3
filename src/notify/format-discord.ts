/**
 * Discord's execute-webhook shape: `content` (at most 2000 characters) and one embed — title
 * (256), description (4096: the status block), url (the run's page), a colour by urgency and
 * fields (name 256, value 1024). `allowed_mentions.parse: []` keeps an `@everyone` in a task or
 * a model's status from pinging a server.
 */
import { clip, fenced, notifyFacts, notifyTitle, type NotifyEvent } from './notify-event.js';

const CONTENT_MAX = 2000;
const TITLE_MAX = 256;
const DESCRIPTION_MAX = 4096;
const FIELD_VALUE_MAX = 1024;

/** Orange for a person's turn, red for a failure, green for an ending. */
const COLOURS = { waiting: 0xf0a020, failed: 0xd03030, finished: 0x30a050 } as const;

/** The Discord payload of an event. */
export function discordPayload(ev: NotifyEvent): Record<string, unknown> {
  const title = notifyTitle(ev);
  const embed: Record<string, unknown> = {
    title: clip(title, TITLE_MAX),
    color: COLOURS[ev.kind],
    fields: notifyFacts(ev).map(([name, value]) => ({ name, value: clip(value === '' ? '-' : value, FIELD_VALUE_MAX), inline: value.length <= 40 })),
    timestamp: ev.at,
  };
  if (ev.status_block !== null && ev.status_block.trim() !== '') embed.description = fenced(ev.status_block, DESCRIPTION_MAX);
  if (ev.link !== null) embed.url = ev.link;
  return { content: clip(title, CONTENT_MAX), embeds: [embed], allowed_mentions: { parse: [] } };
}
