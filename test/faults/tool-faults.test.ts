/**
 * Tools meeting hostile commands and paths through the CLI (issue 5 item 1, SPEC §10): a shell
 * command that never ends, one that prints 100 MB, one that leaves a child behind; file tools
 * pointed out of the working directory, at a FIFO, a device, a binary file. Each is a result
 * the model sees, the run goes on and exits 0, nothing is left running, and every call is stored
 * with its result. Peak memory is printed for the report; its bound is an `npm run bench` figure.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import type { FakeToolCall } from '../support/fake-ollama.js';
import {
  FAST_TIMEOUTS,
  SCENARIO_TIMEOUT_MS,
  eventsOf,
  expectCleanExit,
  expectConsistentSession,
  expectValidStream,
  expectWellFormedRequest,
  figuresForTheReport,
  processesMatching,
  reapOnFinish,
  requestMessages,
  resultOf,
  rssProbe,
  scenario,
  sleepMarker,
  tempDir,
  until,
} from './helpers.js';

/**
 * Bytes the noisy command prints. They pass through a bounded buffer: the kept head and tail are
 * asserted below; the peak RSS (measured ~130–200 MB, a one-tool run ~120–155 MB) is printed.
 */
const NOISE_BYTES = 100_000_000;
/** The registry's cap on one tool result (`DEFAULT_TOOL_OUTPUT_BYTES`) and the event's (`EVENT_OUTPUT_CHARS`), plus their markers. */
const RESULT_CAP_BYTES = 32 * 1024;
const EVENT_CAP_CHARS = 16 * 1024 + 200;

const measured = figuresForTheReport();

forEachBackend((backend) => {
  describe('shell faults', () => {
    it('a command that never ends, one that prints 100 MB, one that leaves a child behind: results, no orphans, output capped', async () => {
      const forever = sleepMarker(1000);
      const orphan = sleepMarker(1000);
      reapOnFinish(`sleep ${forever}`);
      reapOnFinish(`sleep ${orphan}`);
      const s = await scenario(backend, {
        turns: [
          { tool_calls: [{ name: 'shell', arguments: { command: `sleep ${forever}`, timeout_s: 1 } }] },
          { tool_calls: [{ name: 'shell', arguments: { command: `(sleep ${orphan} &) ; echo started` } }] },
          {
            tool_calls: [
              { name: 'shell', arguments: { command: `echo START; yes 0123456789abcdef | head -c ${NOISE_BYTES}; echo; echo END` } },
            ],
          },
          { content: 'Survived all three.' },
        ],
        on_exhausted: 'error',
      });
      const probe = rssProbe();
      const proc = s.start(['run', '-o', 'stream-json', 'misbehave'], { env: { ...FAST_TIMEOUTS, ...probe.env } });

      // The moment each tool has returned, its processes are gone (navi itself still running).
      const timedOut = await proc.waitForEvent('tool_call', (e) => String(e.output).includes('timed out'));
      expect(processesMatching(`sleep ${forever}`), 'the timed-out sleep').toEqual([]);
      const forked = await proc.waitForEvent('tool_call', (e) => String(e.output).startsWith('started'));
      await until(() => processesMatching(`sleep ${orphan}`).length === 0, 10_000, 'the forked child to be gone').catch(() => undefined);
      expect(processesMatching(`sleep ${orphan}`), 'the child the command left behind').toEqual([]);

      const run = await proc.result;
      const peak = probe.peakMb();
      expectCleanExit(run, [0]);
      const events = expectValidStream(run);

      expect(timedOut).toMatchObject({ ok: false });
      expect(String(timedOut.output)).toContain('[timed out after 1 s]');
      // A timer never fires early; how late it may fire is a matter of load, not asserted.
      expect(Number(timedOut.duration_ms)).toBeGreaterThanOrEqual(900);
      // The tool did not wait for the child: it sleeps 1000 s, and the run went on.
      expect(forked).toMatchObject({ ok: true, output: 'started\n[exit code 0]' });

      const noisy = eventsOf(events, 'tool_call')[2];
      const noisyDuration = Number(noisy?.duration_ms);
      measured.push(`${backend.kind}: 100 MB output: peak RSS ${peak?.toFixed(0) ?? '?'} MB, tool ${noisyDuration} ms, event output ${String(noisy?.output).length} chars`);
      expect(noisy).toMatchObject({ name: 'shell', ok: true, truncated: true });
      const shown = String(noisy?.output);
      expect(shown.length).toBeLessThanOrEqual(EVENT_CAP_CHARS);
      expect(shown.startsWith('START\n0123456789abcdef')).toBe(true);
      expect(shown).toMatch(/END\n\[exit code 0\]$/);
      expect(resultOf(run)).toMatchObject({ status: 'success', result: 'Survived all three.' });

      const stored = await expectConsistentSession(s.db, String(resultOf(run).session_id));
      const results = stored.messages.filter((m) => m.role === 'tool');
      expect(results).toHaveLength(3);
      const row = results[2]?.content ?? '';
      expect(Buffer.byteLength(row), 'stored result bytes').toBeLessThanOrEqual(RESULT_CAP_BYTES);
      expect(row.startsWith('START\n')).toBe(true);
      expect(row).toMatch(/bytes omitted/);
      expect(row).toMatch(/END\n\[exit code 0\]$/);
      expect(results[0]?.content).toContain('[timed out after 1 s]');
      // What the model saw next is what was stored.
      const last = requestMessages(s.chats().at(-1));
      expectWellFormedRequest(last);
      const sent = last.filter((m) => m.role === 'tool').map((m) => String(m.content));
      expect(sent.slice(0, 2)).toEqual(results.slice(0, 2).map((m) => m.content));
      // The 32 KB result exceeds the per-message view budget (num_ctx/6 tokens): cut in the request only.
      // (Iteration 2 says nothing new about the budget: no reminder follows it.)
      expect(sent[2]).toMatch(/^START\n[\s\S]*\[…truncated ~\d+ tokens…\][\s\S]*END\n\[exit code 0\]$/);
    }, SCENARIO_TIMEOUT_MS);
  });

  describe('shell timeout', () => {
    it('the model cannot raise tools.shell.timeout_s: a timeout_s of 999999 still stops at the configured 1 s', async () => {
      const marker = sleepMarker(30);
      reapOnFinish(`sleep ${marker}`);
      const s = await scenario(backend, {
        turns: [{ tool_calls: [{ name: 'shell', arguments: { command: `sleep ${marker}`, timeout_s: 999_999 } }] }, { content: 'stopped' }],
        on_exhausted: 'error',
      });
      fs.writeFileSync(path.join(s.cwd, '.nav-config.json'), JSON.stringify({ tools: { shell: { timeout_s: 1 } } }));
      const run = await s.navi(['run', '-o', 'stream-json', 'wait long'], { env: FAST_TIMEOUTS });
      expectCleanExit(run, [0]);
      const call = eventsOf(expectValidStream(run), 'tool_call')[0];
      // The sleep would last 30 s: a result saying "timed out after 1 s" is the cap at work.
      expect(call).toMatchObject({ ok: false, output: '[timed out after 1 s; timeout_s is capped at tools.shell.timeout_s]' });
      expect(processesMatching(`sleep ${marker}`)).toEqual([]);
    }, SCENARIO_TIMEOUT_MS);
  });

  describe('search timeout', () => {
    it('a catastrophic regex in search_files ends at tools.shell.timeout_s as a result; the run goes on, exit 0', async () => {
      const s = await scenario(backend, {
        turns: [
          { tool_calls: [{ name: 'search_files', arguments: { pattern: '^(a+)+$' } }] },
          { tool_calls: [{ name: 'search_files', arguments: { pattern: 'a{3}!' } }] },
          { content: 'searched' },
        ],
        on_exhausted: 'error',
      });
      fs.writeFileSync(path.join(s.cwd, '.nav-config.json'), JSON.stringify({ tools: { shell: { timeout_s: 1 } } }));
      fs.writeFileSync(path.join(s.cwd, 'aaa.txt'), `${'a'.repeat(34)}!\n`);
      const run = await s.navi(['run', '-o', 'stream-json', 'search'], { env: FAST_TIMEOUTS });
      expectCleanExit(run, [0]);
      const calls = eventsOf(expectValidStream(run), 'tool_call');
      expect(calls[0]).toMatchObject({ ok: false, output: expect.stringMatching(/^search timed out after 1 s: \/\^\(a\+\)\+\$\/ /) as unknown });
      expect(calls[1]).toMatchObject({ ok: true, output: `aaa.txt:1: ${'a'.repeat(34)}!` });
      expect(resultOf(run)).toMatchObject({ status: 'success', result: 'searched' });
    }, SCENARIO_TIMEOUT_MS);
  });

  describe('file tool faults', () => {
    it('escapes, symlinks out, a FIFO, a device, a binary file: each a failed result the model sees, nothing leaks or blocks, exit 0', async () => {
      const outside = tempDir('outside');
      fs.writeFileSync(path.join(outside, 'secret.txt'), 'TOP SECRET\n');
      const etcProbe = `/etc/navi-fault-${process.pid}-${backend.kind}`;
      const calls: Array<FakeToolCall & { expect: RegExp; ok?: boolean }> = [
        { name: 'read_file', arguments: { path: '../x' }, expect: /refused: \.\.\/x escapes the working directory/ },
        { name: 'list_dir', arguments: { path: '..' }, expect: /refused: \.\. escapes the working directory/ },
        { name: 'read_file', arguments: { path: '/etc/passwd' }, expect: /refused: absolute path \/etc\/passwd is outside/ },
        { name: 'write_file', arguments: { path: etcProbe, content: 'x' }, expect: /refused: absolute path .* is outside/ },
        { name: 'edit_file', arguments: { path: '/etc/passwd', old_string: 'navi-no-such-text', new_string: 'x' }, expect: /refused: absolute path/ },
        { name: 'read_file', arguments: { path: 'sub/../../x' }, expect: /escapes the working directory/ },
        // Symlinks that lead out: to a directory, to a file, to /etc.
        { name: 'read_file', arguments: { path: 'link-out/secret.txt' }, expect: /leads outside the working directory through a symlink/ },
        { name: 'read_file', arguments: { path: 'file-out.txt' }, expect: /leads outside the working directory through a symlink/ },
        { name: 'write_file', arguments: { path: 'file-out.txt', content: 'pwned' }, expect: /leads outside the working directory through a symlink/ },
        { name: 'write_file', arguments: { path: 'link-out/new.txt', content: 'pwned' }, expect: /leads outside the working directory through a symlink/ },
        { name: 'edit_file', arguments: { path: 'file-out.txt', old_string: 'TOP', new_string: 'PWNED' }, expect: /leads outside/ },
        { name: 'list_dir', arguments: { path: 'link-out' }, expect: /leads outside the working directory through a symlink/ },
        { name: 'search_files', arguments: { pattern: 'SECRET', path: 'link-out' }, expect: /leads outside the working directory through a symlink/ },
        { name: 'read_file', arguments: { path: 'etc-link/passwd' }, expect: /leads outside the working directory through a symlink/ },
        { name: 'write_file', arguments: { path: 'dangling', content: 'x' }, expect: /dangling symlink/ },
        // A search from the top does not follow the symlinks out.
        { name: 'search_files', arguments: { pattern: 'SECRET|root:' }, expect: /^no matches/, ok: true },
        // A FIFO (nobody writes to it: opening it for reading would block forever) and a device.
        { name: 'read_file', arguments: { path: 'fifo' }, expect: /fifo is not a regular file/ },
        { name: 'write_file', arguments: { path: 'fifo', content: 'x' }, expect: /fifo exists and is not a regular file/ },
        { name: 'edit_file', arguments: { path: 'fifo', old_string: 'a', new_string: 'b' }, expect: /fifo is not a regular file/ },
        { name: 'search_files', arguments: { pattern: 'x', path: 'fifo' }, expect: /no matches|not a regular file/, ok: true },
        { name: 'list_dir', arguments: { path: 'fifo' }, expect: /fifo is not a directory/ },
        { name: 'read_file', arguments: { path: 'zero' }, expect: /zero is not a regular file/ },
        { name: 'write_file', arguments: { path: 'zero', content: 'x' }, expect: /zero exists and is not a regular file/ },
        // Binary content.
        { name: 'read_file', arguments: { path: 'bin.dat' }, expect: /bin\.dat: binary file, 4096 bytes/ },
        { name: 'edit_file', arguments: { path: 'bin.dat', old_string: 'ELF', new_string: 'FLE' }, expect: /bin\.dat: binary file/ },
        { name: 'read_file', arguments: { path: 'invalid-utf8.txt' }, expect: /./, ok: true },
      ];
      const s = await scenario(backend, {
        turns: [{ tool_calls: calls.map(({ name, arguments: a }) => ({ name, arguments: a })) }, { content: 'None of that worked.' }],
        on_exhausted: 'error',
      });
      fs.mkdirSync(path.join(s.cwd, 'sub'));
      fs.symlinkSync(outside, path.join(s.cwd, 'link-out'));
      fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(s.cwd, 'file-out.txt'));
      fs.symlinkSync('/etc', path.join(s.cwd, 'etc-link'));
      fs.symlinkSync(path.join(outside, 'not-yet.txt'), path.join(s.cwd, 'dangling'));
      execFileSync('mkfifo', [path.join(s.cwd, 'fifo')]);
      execFileSync('mknod', [path.join(s.cwd, 'zero'), 'c', '1', '5']);
      const binary = Buffer.alloc(4096);
      binary.write('\x7fELF', 0, 'latin1');
      fs.writeFileSync(path.join(s.cwd, 'bin.dat'), binary);
      fs.writeFileSync(path.join(s.cwd, 'invalid-utf8.txt'), Buffer.from([0x61, 0xff, 0xfe, 0x62, 0x0a, 0xc3, 0x28, 0x0a]));

      const run = await s.navi(['run', '-o', 'stream-json', 'poke around'], { env: FAST_TIMEOUTS });
      expectCleanExit(run, [0]);
      const events = expectValidStream(run);
      const results = eventsOf(events, 'tool_call');
      expect(results.map((r, i) => `${i} ${String(r.name)} ok=${String(r.ok)}`)).toEqual(calls.map((c, i) => `${i} ${c.name} ok=${String(c.ok ?? false)}`));
      results.forEach((r, i) => expect(String(r.output), `call ${i}: ${calls[i]?.name} ${JSON.stringify(calls[i]?.arguments)}`).toMatch(calls[i]?.expect ?? /./));
      // Nothing read, written or created outside.
      expect(run.stdout).not.toContain('TOP SECRET');
      expect(run.stdout).not.toContain('root:x:0:0');
      expect(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET\n');
      expect(fs.readdirSync(outside).sort()).toEqual(['secret.txt']);
      expect(fs.existsSync(etcProbe)).toBe(false);
      expect(fs.statSync(path.join(s.cwd, 'fifo')).isFIFO()).toBe(true);
      expect(resultOf(run)).toMatchObject({ status: 'success', exit_code: 0, result: 'None of that worked.' });

      const stored = await expectConsistentSession(s.db, String(resultOf(run).session_id));
      // (+1: the first call's budget note, stored where it was sent.)
      expect(stored.messages).toHaveLength(calls.length + 4);
      expect(stored.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(results.map((r) => r.output));
      expectWellFormedRequest(requestMessages(s.chats()[1]));
    }, SCENARIO_TIMEOUT_MS);
  });
});
