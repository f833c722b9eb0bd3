/**
 * `navi queue` + `navi worker` as a user runs them (issue 21): real PostgreSQL (a database per
 * test), real worker processes, the fake Ollama. Skipped without DATABASE_URL (CI sets it).
 */
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import postgres from 'postgres';
import { runNavi, type NaviProcess } from '../support/cli.js';
import { fakeOllama } from '../support/fake-ollama-harness.js';
import type { FakeOllama } from '../support/fake-ollama.js';
import { ADMIN_URL, addJob, freshDatabase, listJobs, peekJobs, queueEnv, startWorker, taskRepo, waitUntil, workerEvents, type JobRow } from './helpers.js';

const TEST_TIMEOUT_MS = 300_000;

describe.skipIf(ADMIN_URL === undefined)('navi queue and navi worker on PostgreSQL', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  });

  async function setup(): Promise<{ url: string; fake: FakeOllama; repo: string; env: Record<string, string> }> {
    const db = await freshDatabase();
    cleanups.push(db.drop);
    const fake = await fakeOllama({ turns: [] });
    const repo = taskRepo();
    const env = queueEnv(db.url, fake.url);
    const migrated = await runNavi(['db', 'migrate'], { cwd: repo, env });
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toContain('job queue');
    return { url: db.url, fake, repo, env };
  }

  function track(w: NaviProcess): NaviProcess {
    cleanups.push(async () => {
      w.kill('SIGKILL');
      await w.result;
    });
    return w;
  }

  const chats = (fake: FakeOllama): number => fake.requests.filter((r) => r.path === '/api/chat').length;
  /** As `navi queue list` shows it (the final checks). */
  const jobOf = async (repo: string, env: Record<string, string>, id: string): Promise<JobRow | undefined> => (await listJobs(repo, env)).find((j) => j.id === id);
  /** Read from the engine's table (the polls). */
  const peek = async (url: string, id: string): Promise<JobRow | undefined> => (await peekJobs(url)).find((j) => j.id === id);

  it(
    'three jobs and two workers: each job runs exactly once, on its own branch',
    async () => {
      const { url, fake, repo, env } = await setup();
      const ids = [await addJob(repo, env), await addJob(repo, env), await addJob(repo, env, '--priority', '5')];
      const a = track(await startWorker(repo, env));
      const b = track(await startWorker(repo, env, '--concurrency', '2'));
      await waitUntil('three completed jobs', async () => ((await peekJobs(url)).filter((j) => j.status === 'completed').length === 3 ? true : undefined));
      const done = await listJobs(repo, env);
      a.kill('SIGTERM');
      b.kill('SIGTERM');
      expect((await a.result).code).toBe(0);
      expect((await b.result).code).toBe(0);
      expect(done.map((j) => j.id).sort()).toEqual([...ids].sort());
      for (const j of done) expect(j.attempts).toBe(1);
      const runIds = done.map((j) => j.run_id);
      expect(new Set(runIds).size).toBe(3);
      // Each job was taken by one worker, once.
      const started = [...workerEvents(a, 'job_started'), ...workerEvents(b, 'job_started')].map((e) => e.job_id);
      expect([...started].sort()).toEqual([...ids].sort());
      // Ordinary loop runs, completed; their commits on navi/<run-id>.
      const runs = await runNavi(['runs', 'list', '-o', 'json'], { cwd: repo, env });
      const listed = (runs.events[0]?.runs ?? []) as Array<{ id: string; status: string }>;
      expect(listed.map((r) => r.id).sort()).toEqual([...runIds].sort());
      expect(listed.every((r) => r.status === 'completed')).toBe(true);
      const branches = execFileSync('git', ['branch', '--list', 'navi/*'], { cwd: repo, encoding: 'utf8' });
      for (const id of runIds) expect(branches).toContain(`navi/${String(id)}`);
      expect(chats(fake)).toBeGreaterThanOrEqual(3);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'SIGTERM mid-job: the worker saves the loop and hands the job back; another worker resumes the run',
    async () => {
      const { url, fake, repo, env } = await setup();
      const release = fake.holdChats();
      const id = await addJob(repo, env);
      const a = track(await startWorker(repo, env));
      await waitUntil('the first model request', () => (chats(fake) >= 1 ? true : undefined));
      a.kill('SIGTERM');
      const ra = await a.result;
      expect(ra.code, ra.stderr).toBe(0);
      expect(workerEvents(a, 'job_handed_back').map((e) => e.job_id)).toEqual([id]);
      const back = await jobOf(repo, env, id);
      expect(back?.status).toBe('queued');
      const runId = back?.run_id;
      expect(runId).toMatch(/^run_/);
      const stopped = await runNavi(['runs', 'show', String(runId), '-o', 'json'], { cwd: repo, env });
      expect(stopped.stdout).toContain('"interrupted"');
      release();
      const b = track(await startWorker(repo, env));
      await waitUntil('the job completed', async () => ((await peek(url, id))?.status === 'completed' ? true : undefined));
      const finished = (await jobOf(repo, env, id)) as JobRow;
      expect(finished.run_id).toBe(runId);
      expect(finished.attempts).toBe(2);
      expect(workerEvents(b, 'job_started').map((e) => e.run_id)).toEqual([runId]);
      b.kill('SIGTERM');
      expect((await b.result).code).toBe(0);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a SIGKILLed worker's job is taken over once its lease runs out, and the run resumed",
    async () => {
      const { url, fake, repo, env } = await setup();
      const release = fake.holdChats();
      const id = await addJob(repo, env);
      const a = track(await startWorker(repo, env));
      await waitUntil('the first model request', () => (chats(fake) >= 1 ? true : undefined));
      const taken = await waitUntil('the run id', async () => {
        const j = await peek(url, id);
        return j?.run_id ? j : undefined;
      });
      // The machine vanishes: the worker and its loop, at once.
      process.kill(-(a.child.pid ?? 0), 'SIGKILL');
      await a.result;
      release();
      expect((await jobOf(repo, env, id))?.status).toBe('running');
      const b = track(await startWorker(repo, env));
      await waitUntil('the job completed by the second worker', async () => ((await peek(url, id))?.status === 'completed' ? true : undefined));
      const finished = (await jobOf(repo, env, id)) as JobRow;
      expect(finished.run_id).toBe(taken.run_id);
      expect(finished.attempts).toBe(2);
      expect(finished.worker).not.toBe(taken.worker);
      expect(workerEvents(b, 'job_started').map((e) => e.run_id)).toEqual([taken.run_id]);
      const shown = await runNavi(['runs', 'show', String(taken.run_id), '-o', 'json'], { cwd: repo, env });
      expect(shown.stdout).toContain('"completed"');
      b.kill('SIGTERM');
      expect((await b.result).code).toBe(0);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a live job keeps its lease past the first expiry (not taken while alive); cancel stops its loop, saved',
    async () => {
      const { url, fake, repo, env } = await setup();
      const release = fake.holdChats();
      const id = await addJob(repo, env);
      const a = track(await startWorker(repo, env));
      await waitUntil('the first model request', () => (chats(fake) >= 1 ? true : undefined));
      // A second worker supervises too (pg-boss maintenance hands expired leases back).
      const b = track(await startWorker(repo, env));
      const sql = postgres(url, { max: 1, onnotice: () => undefined });
      try {
        // Renewed: the job's expiry moved beyond twice the lease after it started, still active, still the first take.
        await waitUntil('a renewed lease past two lease lengths', async () => {
          const rows = await sql`SELECT state, retry_count, extract(epoch from expire_in) AS expire_s FROM pgboss.job WHERE id = ${id}::uuid`;
          const r = rows[0];
          expect(r?.state).toBe('active');
          expect(Number(r?.retry_count)).toBe(0);
          return Number(r?.expire_s) > 6 ? true : undefined;
        });
      } finally {
        await sql.end();
      }
      const cancelled = await runNavi(['queue', 'cancel', id], { cwd: repo, env });
      expect(cancelled.code, cancelled.stderr).toBe(0);
      expect(cancelled.stdout).toContain('safe point');
      await waitUntil('the worker let the job go', () => (workerEvents(a, 'job_released').length > 0 ? true : undefined));
      release();
      const job = await jobOf(repo, env, id);
      expect(job?.status).toBe('cancelled');
      expect(job?.attempts).toBe(1);
      const shown = await runNavi(['runs', 'show', String(job?.run_id), '-o', 'json'], { cwd: repo, env });
      expect(shown.stdout).toContain('"interrupted"');
      expect(workerEvents(b, 'job_started')).toEqual([]);
      const again = await runNavi(['queue', 'cancel', id], { cwd: repo, env });
      expect(again.code).toBe(2);
      a.kill('SIGTERM');
      b.kill('SIGTERM');
      expect((await a.result).code).toBe(0);
      expect((await b.result).code).toBe(0);
    },
    TEST_TIMEOUT_MS,
  );
});
