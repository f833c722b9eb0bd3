/**
 * The live page of `navi serve` in headless Chromium, as a user drives it: the built CLI serving
 * the page against the fake Ollama, a loop started from the page (or with POST /runs), its status
 * block updating, a strict-approval prompt answered with a button, the run stopped, a chat, and a
 * token given to the server and pasted into the page's sign-in dialog. The page is opened through
 * the sign-in address navi serve prints (`/#token=…`) otherwise. Screenshots go to test-artifacts/serve-page/. Skipped only when Debian's
 * chromium is not installed (.ci/run installs it).
 */
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { SCENARIO_TIMEOUT_MS, scenario, until } from '../scenario/helpers.js';
import { fixIteration, loopRepo, say, tc } from '../loop-scenario/helpers.js';
import type { FakeScript } from '../support/fake-ollama.js';
import { HAVE_CHROMIUM, PAGE_WAIT_MS, foreignRequests, type PageGlobals, openBrowser, startServe, textOf, waitForGone, waitForText } from './browser.js';

const T = SCENARIO_TIMEOUT_MS * 4;
/** Model text that would run script if the page ever put it in as HTML. */
const HOSTILE = 'Read math.js <img src=x onerror="window.__navi_xss=1"><script>window.__navi_xss=2</script> & more';

if (!HAVE_CHROMIUM) {
  console.warn('test/serve-page: /usr/bin/chromium is missing (apt-get install chromium; .ci/run does): the live page tests are skipped');
}

const script = (...turns: FakeScript['turns']): FakeScript => ({ turns });

describe.skipIf(!HAVE_CHROMIUM)('the live page (Chromium)', () => {
  forEachBackend((backend) => {
    it(
      'a loop started from the page: the status block updates, a strict-approval prompt is answered with a button, Stop ends the run',
      async () => {
        const s = await scenario(backend, script(
          { thinking: 'Look at math.js first.', tool_calls: [{ name: 'read_file', arguments: { path: 'math.js' } }] },
          say(HOSTILE),
          tc('read_file', { path: 'math.test.js' }),
          say('Iteration two.'),
        ));
        loopRepo(s.cwd);
        const served = await startServe(s);
        const b = await openBrowser();
        const { page } = b;
        await page.goto(served.signIn);
        await page.fill('[data-testid=start-task]', 'task.yaml');
        await page.selectOption('[data-testid=start-approval]', 'strict');
        await page.click('[data-testid=start-submit]');

        // Iteration 1 ends at the approval prompt, with its status block shown.
        await page.waitForSelector('[data-testid=approval]', { timeout: PAGE_WAIT_MS });
        await waitForText(page, '[data-testid=run-status]', /awaiting decision/);
        expect(await textOf(page, '[data-testid=status-summary]')).toMatch(/RESEARCH|INIT|IMPL/);
        expect(await page.getAttribute('[data-testid=status-summary]', 'data-iteration')).toBe('1');
        expect(await textOf(page, '[data-testid=status-block]')).toMatch(/NAVIGATOR_STATUS[\s\S]*Iteration: 1\//);
        expect(await textOf(page, '[data-testid=approval]')).toMatch(/Accept iteration 1/);
        expect(await page.locator('[data-testid=iteration]').count()).toBe(1);
        expect(await textOf(page, '[data-testid=run-task]')).toMatch(/Make the failing test pass/);
        expect(await textOf(page, '[data-testid=budget-tokens]')).toMatch(/\d/);
        // The model's text is shown as written, never run as markup.
        expect(await textOf(page, '[data-testid=current-stream]')).toContain(HOSTILE);
        expect(await page.locator('[data-testid=current-stream] img, [data-testid=current-stream] script').count()).toBe(0);
        expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).__navi_xss)).toBeUndefined();
        expect(await textOf(page, '[data-testid=current-stream]')).toContain('Look at math.js first.');
        expect(await page.locator('[data-testid=tool-call][data-state=ok]').count()).toBe(1);
        expect(await textOf(page, '[data-testid=runs]')).toMatch(/fix-add/);
        await b.screenshot(`approval-${backend.kind}`);

        // Continue: iteration 2 runs; its model call is held so Stop lands while it runs.
        const release = s.fake.holdChats();
        try {
          const chatsBefore = s.chats().length;
          await page.click('[data-testid=decision-continue]');
          await waitForGone(page, '[data-testid=approval]');
          await waitForText(page, '.current h3', /Iteration 2/);
          await waitForText(page, '[data-testid=run-status]', /^running$/);
          await waitForText(page, '[data-testid=iteration][data-iteration="1"] summary', /Continue/);
          await until(() => s.chats().length > chatsBefore, PAGE_WAIT_MS, 'iteration 2 to call the model');
          await b.screenshot(`running-${backend.kind}`);
          await page.click('[data-testid=stop-run]');
          await waitForText(page, '[data-testid=run-status]', /interrupted|aborted|incomplete/);
        } finally {
          release();
        }
        await page.waitForSelector('[data-testid=run-complete]', { timeout: PAGE_WAIT_MS });
        expect(await page.locator('[data-testid=stop-run]').count()).toBe(0);
        await b.screenshot(`stopped-${backend.kind}`);

        const runId = await page.getAttribute('[data-testid=run-view]', 'data-run-id');
        const rest = (await (await fetch(`${served.url}/runs/${String(runId)}`, { headers: served.auth })).json()) as { status: string; iterations: unknown[] };
        expect(await textOf(page, '[data-testid=run-status]')).toBe(rest.status.replace(/_/g, ' '));
        expect(rest.iterations).toHaveLength(1);
        expect(foreignRequests(b.requests, served.url)).toEqual([]);
        // The page runs under a policy that allows this server only (a violation would be a console error).
        expect((await fetch(`${served.url}/`)).headers.get('content-security-policy')).toMatch(/connect-src 'self'/);
        expect(b.errors).toEqual([]);
      },
      T,
    );

    it(
      'with a token given: the page asks for it once (saying where it is), then follows a loop started with POST /runs to its end over a ticketed socket',
      async () => {
        const s = await scenario(backend, script(...fixIteration()));
        loopRepo(s.cwd);
        const token = 'page-test-token-1234';
        const served = await startServe(s, [], { env: { NAVI_SERVE_TOKEN: token } });
        const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
        const b = await openBrowser();
        const { page } = b;
        await page.goto(`${served.url}/`);
        await page.waitForSelector('[data-testid=token-dialog][open]', { timeout: PAGE_WAIT_MS });
        expect(await textOf(page, '[data-testid=token-dialog]')).toMatch(/Open the address it\s+printed[\s\S]*#token=[\s\S]*navi-serve-token/);
        await page.fill('[data-testid=token-input]', token);
        await page.click('[data-testid=token-ok]');
        await waitForText(page, '[data-testid=runs]', /No loop runs yet/);

        const started = await fetch(`${served.url}/runs`, { method: 'POST', headers: auth, body: JSON.stringify({ task: 'task.yaml' }) });
        expect(started.status, await started.clone().text()).toBeLessThan(300);
        const { id } = (await started.json()) as { id: string };
        await page.click(`[data-testid=run-link][data-run-id="${id}"]`, { timeout: PAGE_WAIT_MS });
        await waitForText(page, '[data-testid=run-status]', /^completed$/);
        await page.waitForSelector('[data-testid=run-complete]', { timeout: PAGE_WAIT_MS });
        expect(await textOf(page, '[data-testid=run-complete]')).toMatch(/LOOP COMPLETE|completed/);
        expect(await textOf(page, '[data-testid=status-block]')).toMatch(/NAVIGATOR_STATUS/);
        expect(await textOf(page, '[data-testid=iteration] .gate')).toBe('EXIT');
        expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).sessionStorage.getItem('navi.token'))).toBe(token);
        // The token never went into a URL.
        expect(b.requests.filter((u) => u.includes(token))).toEqual([]);
        expect(foreignRequests(b.requests, served.url)).toEqual([]);
        // Chromium logs each 401 of the requests made before the token was given; nothing else.
        expect(b.errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
        await b.screenshot(`token-completed-${backend.kind}`);
      },
      T,
    );

    it(
      'a chat on a phone-sized screen: a new session, a message, the streamed answer as text',
      async () => {
        const s = await scenario(backend, script(
          { thinking: 'Greet back.', content: `Hello! ${HOSTILE}` },
        ));
        const served = await startServe(s);
        const b = await openBrowser({ width: 390, height: 844 });
        const { page } = b;
        await page.goto(served.signIn);
        await page.click('[data-testid=new-session]');
        await page.waitForSelector('[data-testid=session-view]', { timeout: PAGE_WAIT_MS });
        // One column on a phone: the lists make way for the chat.
        expect(await page.isVisible('[data-testid=start-loop]')).toBe(false);
        await page.fill('[data-testid=chat-input]', 'Say hello <b>please</b>');
        await page.click('[data-testid=chat-send]');
        await waitForText(page, '[data-testid=session-stream]', /Hello!/);
        await waitForText(page, '[data-testid=session-status]', /^idle$/);
        expect(await textOf(page, '[data-testid=session-view]')).toContain('Say hello <b>please</b>');
        expect(await textOf(page, '[data-testid=session-stream]')).toContain(HOSTILE);
        expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).__navi_xss)).toBeUndefined();
        const width = await page.evaluate(() => (globalThis as unknown as PageGlobals).document.documentElement.scrollWidth);
        expect(width).toBeLessThanOrEqual(390);
        expect(foreignRequests(b.requests, served.url)).toEqual([]);
        expect(b.errors).toEqual([]);
        await b.screenshot(`chat-phone-${backend.kind}`);
      },
      T,
    );
  });
});
