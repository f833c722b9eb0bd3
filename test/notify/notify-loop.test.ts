/**
 * `navi loop --notify` as a user runs it (issue 19): the built CLI against the fake Ollama in a
 * real git repository, notifications POSTed to a receiver on 127.0.0.1 (real sockets). An
 * approval prompt, a failure and a finish each arrive once with their payload; Slack and Discord
 * shapes (chosen by `format`, as the receiver is not on their hosts); a receiver that is down or
 * never answers changes neither the loop's outcome nor its exit code, and a `notify_failed`
 * warning says so; the URL's secrets reach neither stdout, stderr nor the database.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { closedPort } from '../support/ports.js';
import { dumpDatabase } from '../security/helpers.js';
import { expectFailure } from '../scenario/helpers.js';
import { eventsOf, expectExit, expectLoopStream, fixIteration, lookIteration, loopRepo, resultOf, scenario, script } from '../loop-scenario/helpers.js';
import { startReceiver } from './receiver.js';

/** Per-test hang guard: far above the real time. */
const T = 120_000;
const SECRET = 'tok-93f1c0ffee';

function expectNoSecret(text: string, where: string): void {
  expect(text.includes(SECRET), `${where} holds the URL's secret`).toBe(false);
}

forEachBackend((backend) => {
  describe('navi loop --notify', () => {
    it(
      'a finished loop: one "finished" notification in the generic shape; the secret in the URL is nowhere in output or store',
      async () => {
        const rec = await startReceiver();
        const s = await scenario(backend, script(fixIteration()));
        loopRepo(s.cwd);
        const run = await s.navi(['loop', 'task.yaml', '-o', 'stream-json', '--notify', `${rec.base}/hooks/${SECRET}?token=${SECRET}`]);
        expectExit(run, 0);
        const events = expectLoopStream(run);
        expect(eventsOf(events, 'warning').filter((w) => w.code === 'notify_failed')).toEqual([]);
        expect(rec.received).toHaveLength(1);
        const got = rec.received[0]!;
        expect(got.method).toBe('POST');
        expect(got.headers['content-type']).toBe('application/json');
        expect(got.url).toBe(`/hooks/${SECRET}?token=${SECRET}`);
        expect(got.body).toMatchObject({
          schema: 'navi.notify/1',
          event: 'finished',
          urgency: 'low',
          run_id: resultOf(run).run_id,
          task_name: 'fix-add',
          task: 'Make the failing test pass by fixing math.js.',
          outcome: 'completed',
          reason: 'gate_passed',
          exit_code: 0,
          iteration: 1,
          link: null,
        });
        expect(String(got.body.status_block)).toContain('LOOP COMPLETE');
        expectNoSecret(run.stdout, 'stdout');
        expectNoSecret(run.stderr, 'stderr');
        expectNoSecret(await dumpDatabase(s.db), 'the database');
      },
      T,
    );

    it(
      'strict approval: the prompt arrives once as "waiting" (Slack shape, URL from ${VAR} in config), then the finish; an events filter keeps the rest away',
      async () => {
        const rec = await startReceiver();
        const s = await scenario(backend, script(fixIteration()));
        // `${VAR}` is expanded in the operator's config only, never in a task file (issue 35).
        const notify = [
          { url: '${HOOK_BASE}/slack/${HOOK_TOKEN}', format: 'slack' },
          { url: '${HOOK_BASE}/discord', format: 'discord', events: ['waiting'] },
        ];
        fs.writeFileSync(path.join(s.cwd, '.nav-config.json'), JSON.stringify({ notify }));
        loopRepo(s.cwd);
        fs.writeFileSync(path.join(s.cwd, 'decisions.jsonl'), '{"decision":"continue"}\n');
        const run = await s.navi(['loop', 'task.yaml', '-o', 'stream-json', '--approval', 'strict', '--decisions', 'decisions.jsonl'], {
          env: { HOOK_BASE: rec.base, HOOK_TOKEN: SECRET },
        });
        expectExit(run, 0);
        expectLoopStream(run);
        const slack = rec.received.filter((r) => r.url === `/slack/${SECRET}`);
        const discord = rec.received.filter((r) => r.url === '/discord');
        expect(slack.map((r) => (r.body.text as string).split(':')[0])).toEqual(['navi is waiting for you', 'navi loop finished']);
        const waiting = slack[0]!.body;
        expect(waiting.text).toContain('The exit gate passed on iteration 1');
        const blocks = waiting.blocks as Array<{ type: string; text: { type: string; text: string } }>;
        expect(blocks[0]).toMatchObject({ type: 'header', text: { type: 'plain_text' } });
        expect(blocks[1]!.text).toMatchObject({ type: 'mrkdwn' });
        expect(blocks[1]!.text.text).toContain('*Options:* Finish / Adjust / Abort');
        expect(blocks.some((b) => b.text.text.includes('NAVIGATOR_STATUS'))).toBe(true);
        expect(discord).toHaveLength(1);
        const embed = (discord[0]!.body.embeds as Array<Record<string, unknown>>)[0]!;
        expect(discord[0]!.body).toMatchObject({ allowed_mentions: { parse: [] } });
        expect(String(discord[0]!.body.content)).toMatch(/^navi is waiting for you: /);
        expect(embed.title).toBe(discord[0]!.body.content);
        expect(embed.fields).toEqual(expect.arrayContaining([{ name: 'Options', value: 'Finish / Adjust / Abort', inline: true }]));
        expectNoSecret(run.stdout + run.stderr, 'output');
        expectNoSecret(await dumpDatabase(s.db), 'the database');
      },
      T,
    );

    it(
      'a headless run that stagnates: one "failed" notification with the outcome, exit code 4 and resume hint',
      async () => {
        const rec = await startReceiver();
        const s = await scenario(backend, script(lookIteration('a'), lookIteration('a'), lookIteration('a')));
        loopRepo(s.cwd);
        const run = await s.navi(['loop', 'task.yaml', '-o', 'json', '--notify', `${rec.base}/n`]);
        expectExit(run, 4);
        expect(rec.received).toHaveLength(1);
        expect(rec.received[0]!.body).toMatchObject({ event: 'failed', urgency: 'medium', outcome: 'aborted', reason: 'stagnation', exit_code: 4, iteration: 3 });
        expect(String(rec.received[0]!.body.message)).toContain('same state for 3 iterations');
        expect(String(rec.received[0]!.body.status_block)).toContain('NAVIGATOR_STATUS');
      },
      T,
    );

    it(
      'a receiver that is down or never answers: the loop ends as it would, with a notify_failed warning naming scheme and host only',
      async () => {
        const down = await closedPort();
        const hang = await startReceiver(() => 'hang');
        const s = await scenario(backend, script(fixIteration()));
        loopRepo(s.cwd);
        const run = await s.navi(['loop', 'task.yaml', '-o', 'stream-json', '--notify', `http://127.0.0.1:${down}/x/${SECRET}`, '--notify', `${hang.base}/y?k=${SECRET}`]);
        expectExit(run, 0);
        const events = expectLoopStream(run);
        expect(resultOf(run)).toMatchObject({ status: 'success', reason: 'gate_passed' });
        const warnings = eventsOf(events, 'warning').filter((w) => w.code === 'notify_failed').map((w) => String(w.message));
        expect(warnings).toEqual(
          expect.arrayContaining([
            expect.stringContaining(`notification "finished" to http://127.0.0.1:${down} not delivered: could not connect (ECONNREFUSED)`),
            expect.stringContaining(`notification "finished" to ${hang.base} not delivered: still sending when the loop ended`),
          ]),
        );
        expect(hang.received.length).toBeGreaterThan(0);
        expectNoSecret(run.stdout + run.stderr, 'output');
        expectNoSecret(await dumpDatabase(s.db), 'the database');
      },
      T,
    );

    it(
      'a ${VAR} that is not set is exit 2 before anything runs, naming the variable and not the URL',
      async () => {
        const s = await scenario(backend, script());
        loopRepo(s.cwd);
        const run = await s.navi(['loop', 'task.yaml', '--notify', `https://hooks.slack.com/services/\${NAVI_TEST_UNSET_HOOK}?t=${SECRET}`]);
        expectFailure(run, 2, /notify target https:\/\/hooks\.slack\.com: \$\{NAVI_TEST_UNSET_HOOK\} is not set/);
        expectNoSecret(run.stderr, 'stderr');
        expect(s.chats()).toEqual([]);
      },
      T,
    );
  });
});
