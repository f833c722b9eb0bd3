/**
 * `navi serve` attacked from outside the browser (issue 35), the built CLI on a real port:
 * - DNS rebinding: `Host: attacker.example` (with and without the port) is 403 on REST and on a
 *   WebSocket upgrade, even with the right token; a foreign Origin is 403 on both;
 * - another local user (uid 65534, through setpriv) gets 401 and cannot read the token file;
 * - a text/plain body is 415 and starts nothing; a 200 MB body is 413 while it is still being
 *   sent (declared and streamed), and the server goes on serving;
 * - the kept token: made 0600, reused at the next start, replaced when someone else could have
 *   read it; printed as the sign-in URL only on a terminal, its file named elsewhere.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CLI_PATH, type NaviProcess } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import { scenario } from '../scenario/helpers.js';
import { fixIteration, loopRepo } from '../loop-scenario/helpers.js';
import { HANG_GUARD_MS, serve, stopServe, upgradeStatus } from './helpers.js';

const T = 180_000;
const HUGE = 200 * 1024 * 1024;
const NOBODY = 65534;
const canSetpriv = existsSync('/usr/bin/setpriv') && existsSync('/usr/bin/curl') && typeof process.getuid === 'function' && process.getuid() === 0;

/** A request with any Host header (fetch would not send one of ours). */
function rawGet(url: string, pathName: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${pathName}`, { headers }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Sends a POST of `total` bytes (declared, or chunked when `chunked`) 1 MB at a time, waiting for
 * the socket to take each, and stops as soon as an answer arrives. Returns the answer's status
 * line and how much had been sent by then.
 */
function hugePost(url: string, token: string, total: number, chunked: boolean): Promise<{ statusLine: string; sentWhenAnswered: number }> {
  const { hostname, port } = new URL(url);
  const sock = net.connect(Number(port), hostname);
  let answer = '';
  let sent = 0;
  let sentWhenAnswered = -1;
  let ended = false;
  let statusLineIn: () => void = () => undefined;
  // Settles once the answer's status line is in, or the socket closed without one.
  const statusLine = new Promise<void>((resolve) => (statusLineIn = resolve));
  sock.on('data', (d: Buffer) => {
    if (sentWhenAnswered < 0) sentWhenAnswered = sent;
    answer += d.toString('latin1');
    if (/\r\n/.test(answer)) statusLineIn();
  });
  const closed = new Promise<void>((resolve) => sock.on('close', () => resolve()));
  void closed.then(() => statusLineIn());
  sock.on('error', () => undefined);
  sock.on('close', () => (ended = true));
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`no answer to a ${total}-byte body (sent ${sent})`)), HANG_GUARD_MS);
    sock.once('connect', () => {
      void (async () => {
        sock.write(
          `POST /runs HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
            (chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${total}\r\n`) +
            '\r\n',
        );
        const chunk = Buffer.alloc(1024 * 1024, 0x20);
        while (sent < total && sentWhenAnswered < 0 && !ended) {
          const piece = chunked ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk;
          const more = sock.write(piece);
          sent += chunk.length;
          if (!more) await new Promise<void>((r) => {
            const done = (): void => {
              sock.off('drain', done);
              sock.off('close', done);
              r();
            };
            sock.on('drain', done);
            sock.on('close', done);
          });
        }
        // Wait for the status line (it may come just after the last write).
        await statusLine;
        clearTimeout(guard);
        sock.destroy();
        await closed;
        resolve({ statusLine: answer.split('\r\n')[0] ?? '', sentWhenAnswered: sentWhenAnswered < 0 ? sent : sentWhenAnswered });
      })().catch(reject);
    });
  });
}

/** Resolves with stderr once it matches `pattern`. */
function waitForStderr(proc: NaviProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`stderr never matched ${String(pattern)}:\n${text}`)), HANG_GUARD_MS);
    proc.child.stderr?.on('data', (d: Buffer) => {
      text += d.toString();
      if (pattern.test(text)) {
        clearTimeout(timer);
        resolve(text);
      }
    });
  });
}

describe('navi serve: only the user gets in', () => {
  forEachBackend(
    (backend) => {
      it(
        'DNS rebinding and foreign origins are 403 on REST and WebSocket upgrades, with the right token too',
        async () => {
          const s = await scenario(backend, { turns: [] });
          const srv = await serve(s);
          const port = new URL(srv.url).port;
          const id = String((await srv.api('POST', '/sessions', {})).body.id);
          for (const host of ['attacker.example', `attacker.example:${port}`, `127.0.0.1.attacker.example:${port}`]) {
            for (const p of ['/sessions', '/health', '/']) {
              const got = await rawGet(srv.url, p, { host, ...srv.auth });
              expect(got.status, `${host} ${p}`).toBe(403);
              expect(JSON.parse(got.body)).toMatchObject({ error: { code: 'host_not_allowed' } });
            }
            expect(await upgradeStatus(srv.url, `/ws/sessions/${id}`, { headers: { host, ...srv.auth } })).toBe(403);
          }
          for (const origin of ['http://evil.example', `http://localhost:${Number(port) + 1}`, 'null', `https://attacker.example:${port}`]) {
            expect((await srv.api('GET', '/sessions', undefined, { origin })).status, origin).toBe(403);
            expect(await upgradeStatus(srv.url, `/ws/sessions/${id}`, { headers: { origin, ...srv.auth } }), origin).toBe(403);
          }
          // Its own names and its own page's origin are served.
          for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) expect((await rawGet(srv.url, '/sessions', { host, ...srv.auth })).status).toBe(200);
          expect((await srv.api('GET', '/sessions', undefined, { origin: srv.url })).status).toBe(200);
          expect(await upgradeStatus(srv.url, `/ws/sessions/${id}`, { headers: { origin: srv.url, ...srv.auth } })).toBe(101);
          expect(await stopServe(srv)).toBe(130);
        },
        T,
      );

      it(
        '--allowed-host adds a name (and .domain its subdomains); others stay refused',
        async () => {
          const s = await scenario(backend, { turns: [] });
          const srv = await serve(s, ['--allowed-host', 'navi.example', '--allowed-host', '.lan.example']);
          for (const [host, status] of [['navi.example', 200], ['box.lan.example:8080', 200], ['lan.example', 200], ['evil.example', 403], ['navi.example.evil', 403]] as const) {
            expect((await rawGet(srv.url, '/health', { host, ...srv.auth })).status, host).toBe(status);
          }
          // Behind a proxy that keeps Host: the page's origin is https://navi.example.
          expect((await rawGet(srv.url, '/health', { host: 'navi.example', origin: 'https://navi.example', ...srv.auth })).status).toBe(200);
          expect((await rawGet(srv.url, '/health', { host: 'navi.example', origin: 'https://other.example', ...srv.auth })).status).toBe(403);
          expect(await stopServe(srv)).toBe(130);
        },
        T,
      );

      it.skipIf(!canSetpriv)(
        'another local user (uid 65534) gets 401 everywhere and cannot read the token file',
        async () => {
          const s = await scenario(backend, { turns: [] });
          const srv = await serve(s);
          expect(srv.tokenFile).not.toBeNull();
          const file = String(srv.tokenFile);
          expect(statSync(file).mode & 0o777).toBe(0o600);
          expect(statSync(path.dirname(file)).mode & 0o077).toBe(0);
          const asNobody = (...cmd: string[]): { status: number | null; stdout: string; stderr: string } =>
            spawnSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...cmd], { encoding: 'utf8' });
          for (const p of ['/sessions', '/runs', '/health']) {
            const got = asNobody('curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', `${srv.url}${p}`);
            expect(got.stdout, p).toBe('401');
          }
          const started = asNobody('curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', '-H', 'Content-Type: application/json', '-d', '{"task":"x","approval":"none"}', `${srv.url}/runs`);
          expect(started.stdout).toBe('401');
          const read = asNobody('cat', file);
          expect(read.status).not.toBe(0);
          expect(read.stdout).toBe('');
          expect(read.stderr).toMatch(/Permission denied/);
          expect((await srv.api('GET', '/runs')).body).toEqual({ runs: [] });
          expect(await stopServe(srv)).toBe(130);
        },
        T,
      );

      it(
        'a text/plain body is 415 and starts nothing; a 200 MB body is 413 before it is all sent (declared or streamed); the server goes on',
        async () => {
          const s = await scenario(backend, { turns: fixIteration() });
          loopRepo(s.cwd);
          const srv = await serve(s, ['--cwd', s.cwd]);
          const task = JSON.stringify({ task: 'task.yaml', approval: 'none' });
          for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx']) {
            expect(await srv.api('POST', '/runs', task, { 'content-type': type }), type).toMatchObject({ status: 415, body: { error: { code: 'unsupported_media_type' } } });
          }
          expect((await srv.api('GET', '/runs')).body).toEqual({ runs: [] });
          expect(s.chats()).toEqual([]);

          for (const chunked of [false, true]) {
            const { statusLine, sentWhenAnswered } = await hugePost(srv.url, srv.token, HUGE, chunked);
            expect(statusLine, `chunked: ${String(chunked)}`).toMatch(/^HTTP\/1\.1 413 /);
            expect(sentWhenAnswered, `chunked: ${String(chunked)}`).toBeLessThan(HUGE);
            expect((await srv.api('GET', '/health')).status).toBe(200);
          }
          // Within the limit, JSON is served as before.
          expect((await srv.api('POST', '/sessions', { profile: 'default' })).status).toBe(201);
          expect(await stopServe(srv)).toBe(130);
        },
        T,
      );

      it(
        'the kept token: 0600, the same at the next start, replaced when others could read it or it is not yours; named, not printed, off a terminal',
        async () => {
          const s = await scenario(backend, { turns: [] });
          const first = s.start(['serve', '--port', '0']);
          const text = await waitForStderr(first, /the token is in (\S+);/);
          const file = /the token is in (\S+);/.exec(text)?.[1] ?? '';
          const token = readFileSync(file, 'utf8').trim();
          expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
          expect(text).not.toContain(token);
          expect(text).toMatch(/open http:\/\/127\.0\.0\.1:\d+\/#token=<the token> to sign the page in/);
          first.kill('SIGTERM');
          expect((await first.result).code).toBe(130);

          const again = await serve(s);
          expect(again.tokenFile).toBe(file);
          expect(again.token).toBe(token);
          expect(await stopServe(again)).toBe(130);

          chmodSync(file, 0o644);
          const loose = await serve(s);
          expect(loose.token).not.toBe(token);
          expect(statSync(file).mode & 0o777).toBe(0o600);
          expect((await loose.api('GET', '/health', undefined, { authorization: `Bearer ${token}` })).status).toBe(401);
          expect(await stopServe(loose)).toBe(130);
          expect((await loose.proc.result).stderr).toMatch(/was replaced by a new token: others could read or change it \(mode 644\)/);

          if (typeof process.getuid === 'function' && process.getuid() === 0) {
            chownSync(file, NOBODY, NOBODY);
            const foreign = await serve(s);
            expect(foreign.token).not.toBe(loose.token);
            expect(statSync(file).uid).toBe(0);
            expect(await stopServe(foreign)).toBe(130);
            expect((await foreign.proc.result).stderr).toMatch(/belongs to uid 65534, not to you/);
          }
        },
        T,
      );

      it.skipIf(!existsSync('/usr/bin/script'))(
        'on a terminal the sign-in URL is printed once, with the token in the fragment',
        async () => {
          const s = await scenario(backend, { turns: [] });
          const env = s.env();
          const cmd = `exec ${process.execPath} ${CLI_PATH} serve --port 0 --ollama-host ${s.fake.url}`;
          const child = spawn('script', ['-qefc', cmd, '/dev/null'], { cwd: s.cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
          const exited = new Promise((resolve) => child.on('exit', resolve));
          // script passes SIGTERM on to navi serve; also when the test fails before it would.
          onTestFinished(async () => {
            if (child.exitCode === null && child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
            await exited;
          });
          let screen = '';
          const signed = await new Promise<string>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`no sign-in URL:\n${screen}`)), HANG_GUARD_MS);
            child.stdout.on('data', (d: Buffer) => {
              screen += d.toString();
              const m = /open (http:\/\/127\.0\.0\.1:\d+\/#token=([A-Za-z0-9_-]+))/.exec(screen);
              if (m?.[1] !== undefined) {
                clearTimeout(timer);
                resolve(m[1]);
              }
            });
          });
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
          await exited;
          const url = new URL(signed);
          const token = url.hash.slice('#token='.length);
          expect(url.search).toBe('');
          expect(screen.split(token).length - 1).toBe(1);
          expect(screen).toMatch(/the token is kept in \S+navi-serve-token/);
          const file = /kept in (\S+navi-serve-token)/.exec(screen)?.[1] ?? '';
          expect(readFileSync(file, 'utf8').trim()).toBe(token);
        },
        T,
      );
    },
  );
});
