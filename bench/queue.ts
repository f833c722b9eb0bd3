/**
 * The job-queue figures of `npm run bench` (`--only queue`; issue 21), PostgreSQL only, info rows
 * (no target yet: the first figures are the baseline):
 * - the engine's overhead: jobs taken and completed per second by 4 workers doing only what
 *   `navi worker` does around a loop (pg-boss fetch, claim with the lease, complete), in-process;
 * - trivial loop jobs per second with 4 `navi worker` processes (each job a real `navi loop` in
 *   its own git worktree against the zero-latency fake: what the queue adds to a loop's own cost);
 * - enqueue → first model request: from `navi queue add` returning (the job committed) to the
 *   fake's receipt of the job's first /api/chat, with an idle worker at the default poll interval.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import type PgBoss from 'pg-boss';
import { openEngine, QUEUE, queueTiming, RETRY_LIMIT } from '../src/queue/engine.js';
import type { JobData } from '../src/queue/job-data.js';
import { claimJob } from '../src/queue/lease.js';
import type { FakeScript } from '../test/support/fake-ollama.js';

export interface QueueBenchContext {
  main: string;
  /** The Node binary navi runs on (bench --node). */
  node: string;
  work: string;
  /** Environment of the navi processes: DATABASE_URL (PostgreSQL) and OLLAMA_HOST (the fake). */
  env: NodeJS.ProcessEnv;
  url: string;
  play(script: FakeScript): number;
  chats(from: number): Array<{ tBody?: number }>;
  row: (figure: string, target: string, measured: string, verdict: 'pass' | 'FAIL' | 'info' | 'error', data?: Record<string, unknown>) => void;
  median: (xs: number[]) => number;
  /** Jobs for the throughput figures. */
  engineJobs?: number;
  loopJobs?: number;
  latencyRounds?: number;
}

const WORKERS = 4;
/** Every chat answered at once with "done." (the task's check commits: the gate passes without tool calls). */
const TRIVIAL: FakeScript = { turns: [], on_exhausted: 'done' };

function taskRepo(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const task = ['name: tick', 'prompt: Say done.', 'loop: { max_iterations: 3, exit_requires_explicit_signal: false }', 'checks:', '  - { name: commit, run: "git commit -q --allow-empty -m tick" }', ''].join('\n');
  fs.writeFileSync(path.join(dir, 'task.yaml'), task);
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: dir, encoding: 'utf8' });
  git('init', '-q');
  git('config', 'user.email', 'bench@navi');
  git('config', 'user.name', 'bench');
  git('add', '-A');
  git('commit', '-qm', 'init');
  return dir;
}

/** `n` jobs as `navi queue add` sends them (send.ts), in one INSERT. */
function batch(n: number, data: JobData): PgBoss.JobInsert[] {
  return Array.from({ length: n }, () => ({ name: QUEUE, data, priority: 0, retryLimit: RETRY_LIMIT, retryDelay: 0, expireInSeconds: queueTiming({}).leaseSeconds }));
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 600_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`bench queue: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function countState(boss: PgBoss, state: string): Promise<number> {
  const { rows } = await boss.getDb().executeSql(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND state = $2`, [QUEUE, state]);
  return Number((rows[0] as { n: number } | undefined)?.n ?? 0);
}

function startWorker(ctx: QueueBenchContext, cacheDir: string): Promise<ChildProcess> {
  const child = spawn(ctx.node, [ctx.main, 'worker', '-o', 'json', '--cache-dir', cacheDir], { cwd: ctx.work, env: ctx.env, stdio: ['ignore', 'pipe', 'ignore'] });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (l) => {
      if (l.includes('"worker_ready"')) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`navi worker exited (${String(code)}) before it was ready`)));
  });
}

async function stopWorkers(workers: ChildProcess[]): Promise<void> {
  await Promise.all(
    workers.map(
      (w) =>
        new Promise<void>((resolve) => {
          if (w.exitCode !== null) return resolve();
          w.on('exit', () => resolve());
          w.kill('SIGTERM');
        }),
    ),
  );
}

/** 4 in-process takers: fetch, claim (the lease), complete — the engine's cost per job. */
async function engineRate(url: string, n: number, data: JobData): Promise<number> {
  const timing = queueTiming({});
  const bosses = await Promise.all(Array.from({ length: WORKERS }, () => openEngine({ url, timing, supervise: false })));
  try {
    const first = bosses[0] as PgBoss;
    await first.insert(batch(n, data));
    const t0 = performance.now();
    let done = 0;
    await Promise.all(
      bosses.map(async (boss, i) => {
        for (;;) {
          const [job] = await boss.fetch<JobData>(QUEUE, { batchSize: 1, includeMetadata: true });
          if (job === undefined) return;
          await claimJob(boss.getDb(), job.id, `bench-${i}`, timing.leaseSeconds);
          await boss.complete(QUEUE, job.id, { exit_code: 0 });
          done += 1;
        }
      }),
    );
    return done / ((performance.now() - t0) / 1000);
  } finally {
    await Promise.all(bosses.map((b) => b.stop({ graceful: false, wait: true, close: true })));
  }
}

export async function figureQueue(ctx: QueueBenchContext): Promise<void> {
  const repo = taskRepo(path.join(ctx.work, 'queue-repo'));
  const data: JobData = { task: 'task.yaml', repo, loop: {} };
  const migrated = spawn(ctx.node, [ctx.main, 'db', 'migrate'], { cwd: repo, env: ctx.env, stdio: 'ignore' });
  await new Promise((r) => migrated.on('exit', r));

  const engineJobs = ctx.engineJobs ?? 400;
  const rate = await engineRate(ctx.url, engineJobs, data);
  ctx.row(`queue engine: jobs/s, ${WORKERS} takers (fetch + lease + complete)`, 'info', `${rate.toFixed(0)} jobs/s`, 'info', { jobs: engineJobs });

  const boss = await openEngine({ url: ctx.url, timing: queueTiming({}), supervise: false });
  const workers: ChildProcess[] = [];
  try {
    ctx.play(TRIVIAL);
    for (let i = 0; i < WORKERS; i += 1) workers.push(await startWorker(ctx, path.join(ctx.work, `queue-cache-${i}`)));
    const loopJobs = ctx.loopJobs ?? 12;
    const before = await countState(boss, 'completed');
    const t0 = performance.now();
    await boss.insert(batch(loopJobs, data));
    await waitFor('the loop jobs', async () => (await countState(boss, 'completed')) >= before + loopJobs);
    const loopRate = loopJobs / ((performance.now() - t0) / 1000);
    ctx.row(`queue: trivial loop jobs/s, ${WORKERS} navi worker processes`, 'info', `${loopRate.toFixed(2)} jobs/s`, 'info', { jobs: loopJobs });

    // Enqueue → first model request, one job at a time on idle workers (default 2 s poll).
    const samples: number[] = [];
    for (let r = 0; r < (ctx.latencyRounds ?? 5); r += 1) {
      const from = ctx.play(TRIVIAL);
      const done = await countState(boss, 'completed');
      const add = spawn(ctx.node, [ctx.main, 'queue', 'add', 'task.yaml'], { cwd: repo, env: ctx.env, stdio: 'ignore' });
      await new Promise((res) => add.on('exit', res));
      const enqueued = performance.now();
      await waitFor('the first model request', () => Promise.resolve(ctx.chats(from).some((c) => c.tBody !== undefined)));
      const first = ctx.chats(from).find((c) => c.tBody !== undefined)?.tBody ?? Number.NaN;
      samples.push(first - enqueued);
      await waitFor('the job to complete', async () => (await countState(boss, 'completed')) > done);
    }
    ctx.row('queue: enqueue → first model request (idle worker)', 'info', `${ctx.median(samples).toFixed(0)} ms median`, 'info', { samples });
  } finally {
    await stopWorkers(workers);
    await boss.stop({ graceful: false, wait: true, close: true });
  }
}
