/**
 * Cooperative stop (SPEC §8, §4 exit 130): SIGINT/SIGTERM during a silent prefill stop the run
 * within a second with everything so far saved; a second SIGINT exits at once and leaves no tool
 * process behind.
 */
import { execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { NaviProcess } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import { SCENARIO_TIMEOUT_MS, describeRun, eventsOf, expectValidStream, resultOf, scenario, until, type Scenario } from './helpers.js';

/** SPEC §12: stop latency during prefill ≤ 1 s. */
const STOP_LATENCY_MS = 1_000;

/** Pids of processes whose command line contains `marker`. */
function processesMatching(marker: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/** Kills leftovers of a failed test so they do not outlive the suite. */
function reap(marker: string): void {
  for (const pid of processesMatching(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/** A turn whose first chunk comes long after any stop: a model prefilling a long prompt. */
const SILENT_PREFILL = { turns: [{ first_chunk_delay_ms: 15_000, content: 'too late' }] };

/**
 * Resolves once the run has written its first rows (the session and the prompt), i.e. its
 * database is open. PostgreSQL: the session row is visible from another connection. PGlite
 * (locked, so unreadable from here): its WAL file was written after `since`.
 */
async function databaseInUse(s: Scenario, since: number): Promise<void> {
  if (s.db.kind === 'postgres') {
    const store = await s.db.open();
    try {
      const deadline = Date.now() + 10_000;
      while ((await store.sessions.list({ limit: 1 })).length === 0) {
        if (Date.now() > deadline) throw new Error('timed out waiting for the session row');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await store.close();
    }
    return;
  }
  const wal = path.join(s.db.dataDir, 'pg_wal');
  const written = (): boolean =>
    fs.readdirSync(wal).some((f) => /^[0-9A-F]{24}$/.test(f) && fs.statSync(path.join(wal, f)).mtimeMs > since);
  await until(written, 10_000, 'the embedded database to be written');
}

/**
 * Stops a run whose model is prefilling: once `ready` has happened, sends `signal`; expects exit
 * 130, an `interrupted` result, the prompt saved and the model request cut. Returns the time
 * from the signal to the exit.
 */
async function stopDuringPrefill(s: Scenario, signal: NodeJS.Signals, ready: (proc: NaviProcess, started: number) => Promise<void>): Promise<number> {
  const started = Date.now();
  const proc = s.start(['run', '-o', 'stream-json', 'summarise the repository']);
  await ready(proc, started);
  proc.kill(signal);
  const run = await proc.result;
  expect(run.code, describeRun(run)).toBe(130);
  const sentAt = run.signalsSentAt[0] ?? 0;
  expectValidStream(run);
  const result = resultOf(run);
  expect(result).toMatchObject({ status: 'interrupted', exit_code: 130, reason: 'interrupted' });
  expect(eventsOf(run.events, 'stream_end').map((e) => e.stop_reason)).toEqual(['interrupted']);

  // Everything so far is saved: the session and the user's message.
  const sessionId = String(result.session_id);
  const saved = await s.db.withStore(async (store) => ({
    session: await store.sessions.get(sessionId),
    messages: await store.messages.list(sessionId),
  }));
  expect(saved.session?.id).toBe(sessionId);
  expect(saved.messages.map((m) => [m.role, m.content])).toEqual([['user', 'summarise the repository']]);

  // The HTTP request to the model (if it had started) was cut within the second, not left to finish.
  const index = s.fake.requests.findIndex((r) => r.path === '/api/chat');
  if (index >= 0) {
    const closed = await s.fake.waitForClose(index, 2_000);
    expect(closed.clientClosed).toBe(true);
    expect((closed.closedAt ?? Infinity) - sentAt).toBeLessThan(STOP_LATENCY_MS);
  }
  return run.exitedAt - sentAt;
}

forEachBackend((backend) => {
  describe('stop signals', () => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      it(`${signal} during a silent prefill: exit 130 within 1 s, result interrupted, the prompt saved`, async () => {
        const s = await scenario(backend, SILENT_PREFILL);
        const latency = await stopDuringPrefill(s, signal, async (_proc, started) => {
          await until(() => s.chats().length === 1, 10_000, 'the chat request');
          await databaseInUse(s, started);
        });
        expect(latency, `exit ${latency} ms after ${signal}`).toBeLessThan(STOP_LATENCY_MS);
      }, SCENARIO_TIMEOUT_MS);
    }

    it('SIGINT right after run_started: exit 130 with the prompt saved', async () => {
      const s = await scenario(backend, SILENT_PREFILL);
      const latency = await stopDuringPrefill(s, 'SIGINT', async (proc) => {
        await proc.waitForEvent('run_started');
      });
      // PostgreSQL connects in milliseconds. PGlite may still be opening (about 0.4 s on an idle
      // machine, seconds under load); the prompt is saved first, which is worth that wait.
      expect(latency, `exit ${latency} ms after SIGINT`).toBeLessThan(backend.kind === 'postgres' ? STOP_LATENCY_MS : 8_000);
    }, SCENARIO_TIMEOUT_MS);

    for (const variant of [
      { name: 'a tool running sleep', command: (marker: string) => `sleep ${marker}` },
      // A tool that ignores SIGTERM (and SIGINT) must not outlive a forced exit either.
      { name: 'a tool that ignores SIGTERM', command: (marker: string) => `trap '' TERM INT; sleep ${marker}; true` },
    ]) {
      it(`a second SIGINT exits at once and leaves no process behind (${variant.name})`, async () => {
        const marker = `29.${randomInt(100_000, 999_999)}`;
        try {
          const s = await scenario(backend, {
            turns: [{ tool_calls: [{ name: 'shell', arguments: { command: variant.command(marker) } }] }, { content: 'done' }],
          });
          const proc = s.start(['run', '-o', 'stream-json', 'wait a while']);
          await proc.waitForEvent('tool_started');
          await until(() => processesMatching(`sleep ${marker}`).length > 0, 5_000, 'the sleep process');
          proc.kill('SIGINT');
          await new Promise((resolve) => setTimeout(resolve, 50));
          proc.kill('SIGINT');
          const run = await proc.result;
          // exit(130), or death by the second SIGINT itself: a shell reports both as 130.
          expect(run.code === 130 || run.signal === 'SIGINT', describeRun(run)).toBe(true);
          expect(run.exitedAt - (run.signalsSentAt[0] ?? 0)).toBeLessThan(STOP_LATENCY_MS);
          // Give a killed process group a moment to disappear, then look for survivors.
          await until(() => processesMatching(`sleep ${marker}`).length === 0, 1_000, 'the sleep process to be gone').catch(() => undefined);
          expect(processesMatching(`sleep ${marker}`), 'leftover tool processes').toEqual([]);
        } finally {
          reap(`sleep ${marker}`);
        }
      }, SCENARIO_TIMEOUT_MS);
    }
  });
});
