/**
 * What the live page's browser tests share: Debian's Chromium driven by playwright-core (no
 * browser download), a fresh profile per test, every request and page error recorded so a test
 * can say the page made no request outside navi serve and threw nothing, screenshots kept under
 * test-artifacts/serve-page/ (gitignored), and `navi serve` started on a free port.
 */
import fs from 'node:fs';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { REPO_ROOT, type NaviProcess } from '../support/cli.js';
import { tempDir, type NaviCallOptions, type Scenario } from '../scenario/helpers.js';
import { tokenOf } from '../serve/helpers.js';

export const CHROMIUM = '/usr/bin/chromium';
export const HAVE_CHROMIUM = fs.existsSync(CHROMIUM);
export const ARTIFACTS = path.join(REPO_ROOT, 'test-artifacts', 'serve-page');

/** How long a page condition may take before the test fails: far above the real time (a hang guard). */
export const PAGE_WAIT_MS = 90_000;

/** The flags every run uses: headless, and nothing that talks to the network on its own. */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Every URL the page requested. */
  requests: string[];
  /** Uncaught page errors and console errors. */
  errors: string[];
  /** Saves a full-page PNG as test-artifacts/serve-page/<name>.png and returns its path. */
  screenshot(name: string): Promise<string>;
}

/**
 * Launches Chromium with a fresh profile, closed when the test finishes. `extraArgs`: more
 * command-line flags (the rebinding test maps a name to 127.0.0.1 with --host-resolver-rules).
 */
export async function openBrowser(viewport = { width: 1200, height: 900 }, extraArgs: readonly string[] = []): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const userDataDir = tempDir('chromium-profile');
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...FLAGS, ...extraArgs],
    viewport,
  });
  onTestFinished(() => context.close());
  const page = context.pages()[0] ?? (await context.newPage());
  const requests: string[] = [];
  const errors: string[] = [];
  context.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  return {
    context,
    page,
    requests,
    errors,
    async screenshot(name) {
      fs.mkdirSync(ARTIFACTS, { recursive: true });
      const file = path.join(ARTIFACTS, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      return file;
    },
  };
}

export interface Served {
  url: string;
  process: NaviProcess;
  /** The server's token: the one given (NAVI_SERVE_TOKEN), else read from the file its listening line names. */
  token: string;
  /** The address that signs the page in (`url/#token=…`), as navi serve prints it on a terminal. */
  signIn: string;
  /** `{authorization: 'Bearer …'}` for the test's own requests. */
  auth: Record<string, string>;
}

/**
 * Starts `navi serve --port 0 -o json` in the scenario and waits for the line saying where it
 * listens; the token comes from the file that line names, as a script gets it.
 */
export async function startServe(s: Scenario, extra: readonly string[] = [], opts: NaviCallOptions = {}): Promise<Served> {
  const proc = s.start(['serve', '--port', '0', '-o', 'json', ...extra], { timeoutMs: 300_000, ...opts });
  onTestFinished(async () => {
    proc.kill('SIGTERM');
    await proc.result;
  });
  const listening = await proc.waitForEvent('serve_listening');
  const url = String(listening.url).replace(/\/$/, '');
  const token = tokenOf(listening, opts.env?.NAVI_SERVE_TOKEN);
  return { url, process: proc, token, signIn: `${url}/#token=${token}`, auth: { authorization: `Bearer ${token}` } };
}

/** Requests that went anywhere but `origin` (data: URLs are the page's own). */
export function foreignRequests(requests: readonly string[], origin: string): string[] {
  const base = new URL(origin);
  return requests.filter((u) => {
    if (u.startsWith('data:')) return false;
    const url = new URL(u);
    return url.host !== base.host;
  });
}

/** Text of the element `selector`, waiting for it to show. */
export async function textOf(page: Page, selector: string): Promise<string> {
  const el = await page.waitForSelector(selector, { timeout: PAGE_WAIT_MS });
  return (await el.textContent()) ?? '';
}

/**
 * The little of the DOM the in-page functions use (this project's TypeScript has no DOM types).
 * In-page code is always a function, never a string: the page's Content-Security-Policy forbids
 * eval, which Playwright uses for strings.
 */
export interface PageGlobals {
  document: { querySelector(selector: string): { textContent: string | null } | null; documentElement: { scrollWidth: number } };
  sessionStorage: { getItem(key: string): string | null };
  location: { href: string; hash: string; host: string };
  [name: string]: unknown;
}

/** Waits until the element's text matches `pattern` (the condition polled by Chromium). */
export async function waitForText(page: Page, selector: string, pattern: RegExp): Promise<void> {
  await page.waitForFunction(
    ([sel, source, flags]) => {
      const g = globalThis as unknown as PageGlobals;
      const el = g.document.querySelector(sel);
      return el !== null && new RegExp(source, flags).test(el.textContent ?? '');
    },
    [selector, pattern.source, pattern.flags] as const,
    { timeout: PAGE_WAIT_MS, polling: 50 },
  );
}

/** Waits until `selector` matches no element. */
export async function waitForGone(page: Page, selector: string): Promise<void> {
  await page.waitForSelector(selector, { state: 'detached', timeout: PAGE_WAIT_MS });
}
