/**
 * The three payload shapes of one notification (issue 19): navi's generic JSON, Slack's
 * incoming-webhook `text` + Block Kit, Discord's `content` + embed, within each service's limits.
 */
import { describe, expect, it } from 'vitest';
import { discordPayload } from '../../src/notify/format-discord.js';
import { slackEscape, slackPayload } from '../../src/notify/format-slack.js';
import { clip, fenced, genericPayload, notifyTitle, urgencyRank, type NotifyEvent } from '../../src/notify/notify-event.js';

const base: NotifyEvent = {
  kind: 'waiting',
  run_id: 'run_abc',
  task_name: 'fix-add',
  task: 'Fix <add> & co',
  iteration: 2,
  max_iterations: 5,
  prompt: 'approval',
  question: 'Accept iteration 2 and continue?',
  options: ['Continue', 'Adjust', 'Abort'],
  status_block: '---NAVIGATOR_STATUS---\nPHASE: VERIFY\n---END---',
  link: 'http://127.0.0.1:7777/#/runs/run_abc',
  at: '2026-12-03T12:00:00.000Z',
};
const failed: NotifyEvent = {
  kind: 'failed',
  run_id: 'run_abc',
  task_name: 'fix-add',
  task: 'Fix <add> & co',
  iteration: 2,
  max_iterations: 5,
  outcome: 'incomplete',
  reason: 'max_iterations',
  exit_code: 3,
  message: 'max iterations reached',
  resume_command: 'navi loop --resume run_abc --extend 3',
  status_block: base.status_block,
  link: null,
  at: base.at,
};

describe('urgency and title', () => {
  it('waiting › failed › finished', () => {
    expect(['finished', 'waiting', 'failed'].sort((a, b) => urgencyRank(a as 'waiting') - urgencyRank(b as 'waiting'))).toEqual(['waiting', 'failed', 'finished']);
  });
  it.each<[NotifyEvent, string]>([
    [base, 'navi is waiting for you: Accept iteration 2 and continue? (fix-add)'],
    [failed, 'navi loop failed: fix-add (incomplete: max_iterations, exit 3)'],
    [{ ...failed, kind: 'finished', outcome: 'completed', reason: 'gate_passed', exit_code: 0 }, 'navi loop finished: fix-add (completed: gate_passed, exit 0)'],
  ])('%#', (ev, title) => {
    expect(notifyTitle(ev)).toBe(title);
  });
  it('fenced keeps a fence in the text from ending the block, within its budget', () => {
    expect(fenced('a ``` b', 100)).toBe("```\na ''' b\n```");
    expect(fenced('x'.repeat(50), 20)).toHaveLength(20);
  });
  it('clip keeps short text and marks a cut', () => {
    expect(clip('abc', 3)).toBe('abc');
    expect(clip('abcdef', 4)).toBe('abc…');
  });
});

describe('generic', () => {
  it('carries every field, the menu for waiting and the outcome for an ending', () => {
    expect(genericPayload(base)).toEqual({
      schema: 'navi.notify/1',
      event: 'waiting',
      urgency: 'high',
      title: notifyTitle(base),
      run_id: 'run_abc',
      task_name: 'fix-add',
      task: 'Fix <add> & co',
      iteration: 2,
      max_iterations: 5,
      prompt: 'approval',
      question: 'Accept iteration 2 and continue?',
      options: ['Continue', 'Adjust', 'Abort'],
      status_block: base.status_block,
      link: base.link,
      at: base.at,
    });
    expect(genericPayload(failed)).toMatchObject({ event: 'failed', urgency: 'medium', outcome: 'incomplete', reason: 'max_iterations', exit_code: 3, message: 'max iterations reached', resume_command: 'navi loop --resume run_abc --extend 3', link: null });
    expect(genericPayload(failed)).not.toHaveProperty('question');
  });
});

describe('slack', () => {
  it('text plus a header, the facts and the status block in mrkdwn, escaped; the link last', () => {
    const p = slackPayload(base) as { text: string; blocks: Array<{ type: string; text: { type: string; text: string } }> };
    expect(p.text).toBe(slackEscape(notifyTitle(base)));
    expect(p.blocks.map((b) => b.type)).toEqual(['header', 'section', 'section', 'section']);
    expect(p.blocks[0]!.text.type).toBe('plain_text');
    expect(p.blocks[1]!.text.text).toContain('*Options:* Continue / Adjust / Abort');
    expect(p.blocks[2]!.text.text).toMatch(/^```\n---NAVIGATOR_STATUS---/);
    expect(p.blocks[3]!.text.text).toBe('<http://127.0.0.1:7777/#/runs/run_abc|Open the run in navi serve>');
    expect(slackEscape('a <b> & c')).toBe('a &lt;b&gt; &amp; c');
  });
  it('stays within the header (150) and section (3000) limits', () => {
    const long: NotifyEvent = { ...base, question: 'q'.repeat(500), status_block: 's'.repeat(10_000), task_name: 't'.repeat(5000) };
    const p = slackPayload(long) as { blocks: Array<{ type: string; text: { text: string } }> };
    expect(p.blocks[0]!.text.text.length).toBeLessThanOrEqual(150);
    for (const b of p.blocks.slice(1)) expect(b.text.text.length).toBeLessThanOrEqual(3000);
  });
});

describe('discord', () => {
  it('content and one embed: title, colour, fields, the block as description, the link as url; no mentions', () => {
    const p = discordPayload(failed) as { content: string; embeds: Array<Record<string, unknown>>; allowed_mentions: unknown };
    expect(p.content).toBe(notifyTitle(failed));
    expect(p.allowed_mentions).toEqual({ parse: [] });
    const e = p.embeds[0]!;
    expect(e.title).toBe(notifyTitle(failed));
    expect(e.color).toBe(0xd03030);
    expect(e.description).toMatch(/^```\n---NAVIGATOR_STATUS---/);
    expect(e).not.toHaveProperty('url');
    expect(e.fields).toEqual(expect.arrayContaining([{ name: 'Exit code', value: '3', inline: true }, { name: 'Resume', value: 'navi loop --resume run_abc --extend 3', inline: true }]));
    expect((discordPayload(base) as { embeds: Array<Record<string, unknown>> }).embeds[0]!.url).toBe(base.link);
  });
  it('stays within content (2000), title (256), description (4096) and field (1024) limits', () => {
    const long: NotifyEvent = { ...failed, message: 'm'.repeat(5000), status_block: 's'.repeat(10_000), task_name: 't'.repeat(3000) };
    const p = discordPayload(long) as { content: string; embeds: Array<{ title: string; description: string; fields: Array<{ value: string }> }> };
    expect(p.content.length).toBeLessThanOrEqual(2000);
    expect(p.embeds[0]!.title.length).toBeLessThanOrEqual(256);
    expect(p.embeds[0]!.description.length).toBeLessThanOrEqual(4096);
    for (const f of p.embeds[0]!.fields) expect(f.value.length).toBeLessThanOrEqual(1024);
  });
});
