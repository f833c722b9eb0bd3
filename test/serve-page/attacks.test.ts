/**
 * `navi serve` against the pages a user opens (issue 35), in headless Chromium against the built
 * CLI and the fake Ollama:
 * - a page on another origin (a second local server, another port) sends the "simple" request
 *   that needs no CORS preflight — `fetch(serve + '/runs', {mode: 'no-cors', text/plain})` — to
 *   start a loop with `approval: none`: no run starts and the model is never called;
 * - DNS rebinding, with Chromium resolving attacker.example to 127.0.0.1: the page, the API and a
 *   WebSocket under that name are refused (403);
 * - the sign-in address navi serve prints (`/#token=…`) signs the page in, and the token leaves
 *   the address bar at once and never goes into a request.
 */
import http from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { listenOnLoopback } from '../support/ports.js';
import { SCENARIO_TIMEOUT_MS, scenario } from '../scenario/helpers.js';
import { fixIteration, loopRepo } from '../loop-scenario/helpers.js';
import { HAVE_CHROMIUM, PAGE_WAIT_MS, foreignRequests, type PageGlobals, openBrowser, startServe, textOf, waitForText } from './browser.js';

const T = SCENARIO_TIMEOUT_MS * 4;

/** A page the user happens to open: its own server on another port, serving `html`. */
async function attackerSite(html: string): Promise<string> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html);
  });
  const port = await listenOnLoopback(server);
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${port}/`;
}

describe.skipIf(!HAVE_CHROMIUM)('navi serve against hostile pages (Chromium)', () => {
  forEachBackend(
    (backend) => {
      it(
        'a page on another origin cannot start a loop with a no-cors text/plain POST (no run, no model call)',
        async () => {
          const s = await scenario(backend, { turns: fixIteration() });
          loopRepo(s.cwd);
          const served = await startServe(s);
          const body = JSON.stringify({ task: 'task.yaml', approval: 'none' });
          // Each request is one the browser sends without a preflight (no custom header), as an attacker would.
          const site = await attackerSite(`<!doctype html><title>cat pictures</title><script>
            const target = ${JSON.stringify(served.url)};
            const body = ${JSON.stringify(body)};
            const shots = [
              fetch(target + '/runs', { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body }),
              fetch(target + '/runs', { method: 'POST', mode: 'no-cors', body }),
              fetch(target + '/sessions', { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body: '{}' }),
            ];
            Promise.allSettled(shots).then((r) => { document.title = 'sent ' + r.map((x) => x.status).join(','); });
          </script>`);
          const b = await openBrowser();
          await b.page.goto(site);
          await b.page.waitForFunction(() => (globalThis as unknown as PageGlobals & { document: { title: string } }).document.title.startsWith('sent'), undefined, {
            timeout: PAGE_WAIT_MS,
            polling: 50,
          });
          // The requests did leave the browser (an opaque answer each), and reached navi serve.
          expect(b.requests.filter((u) => u.startsWith(served.url))).toHaveLength(3);
          const runs = await fetch(`${served.url}/runs`, { headers: served.auth });
          expect(runs.status).toBe(200);
          expect(((await runs.json()) as { runs: unknown[] }).runs).toEqual([]);
          const sessions = (await (await fetch(`${served.url}/sessions`, { headers: served.auth })).json()) as { sessions: unknown[] };
          expect(sessions.sessions).toEqual([]);
          expect(s.chats()).toEqual([]);
        },
        T,
      );

      it(
        'DNS rebinding: under a name that resolves to 127.0.0.1 the page, the API and a WebSocket are 403',
        async () => {
          const s = await scenario(backend, { turns: [] });
          const served = await startServe(s);
          const port = new URL(served.url).port;
          const b = await openBrowser(undefined, ['--host-resolver-rules=MAP attacker.example 127.0.0.1']);
          const { page } = b;
          const rebound = `http://attacker.example:${port}`;
          const pageAnswer = await page.goto(`${rebound}/`);
          expect(pageAnswer?.status()).toBe(403);
          expect(await textOf(page, 'body')).toMatch(/host_not_allowed/);
          // From a page of that name, as the rebinding script runs: same-origin requests and a socket.
          const got = await page.evaluate(async (token) => {
            const g = globalThis as unknown as { fetch: typeof fetch; WebSocket: new (url: string, p?: string[]) => { addEventListener(t: string, f: (e: { code?: number }) => void): void } };
            const api = await g.fetch('/sessions', { headers: { authorization: `Bearer ${token}` } });
            const ws = await new Promise<string>((resolve) => {
              const sock = new g.WebSocket(`ws://${(globalThis as unknown as PageGlobals).location.host}/ws/sessions/x`, ['navi.v1']);
              sock.addEventListener('open', () => resolve('open'));
              sock.addEventListener('close', (e) => resolve(`closed ${String(e.code)}`));
            });
            return { api: api.status, ws };
          }, served.token);
          expect(got.api).toBe(403);
          expect(got.ws).not.toBe('open');
          // Under its own name the same browser is served.
          await page.goto(served.signIn);
          await waitForText(page, '[data-testid=sessions]', /No sessions yet/);
        },
        T,
      );

      it(
        'the printed sign-in address signs the page in: the token goes to sessionStorage, leaves the address bar, and is in no request URL',
        async () => {
          const s = await scenario(backend, { turns: [] });
          const served = await startServe(s);
          const b = await openBrowser();
          const { page } = b;
          await page.goto(served.signIn);
          await waitForText(page, '[data-testid=runs]', /No loop runs yet/);
          await waitForText(page, '[data-testid=sessions]', /No sessions yet/);
          expect(page.url()).toBe(`${served.url}/`);
          const seen = await page.evaluate(() => {
            const g = globalThis as unknown as PageGlobals;
            return { href: g.location.href, hash: g.location.hash, stored: g.sessionStorage.getItem('navi.token') };
          });
          expect(seen).toEqual({ href: `${served.url}/`, hash: '', stored: served.token });
          expect(await page.locator('[data-testid=token-dialog][open]').count()).toBe(0);
          // A socket works too (a ticket from the token), and nothing carried the token in a URL.
          const ticket = page.waitForResponse((r) => r.url() === `${served.url}/ws-tickets` && r.status() === 201, { timeout: PAGE_WAIT_MS });
          await page.click('[data-testid=new-session]');
          await ticket;
          await waitForText(page, '[data-testid=session-status]', /^idle$/);
          expect(b.requests.filter((u) => u.includes(served.token))).toEqual([]);
          expect(foreignRequests(b.requests, served.url)).toEqual([]);
          expect(b.errors).toEqual([]);
        },
        T,
      );
    },
  );
});
