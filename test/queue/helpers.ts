/**
 * The queue's end-to-end tests: a PostgreSQL database of their own per test (created from
 * DATABASE_URL's server, dropped after), a git repository with a task whose check commits (so a
 * loop passes its gate on plain "done." answers from the fake Ollama), and real worker processes
 * (the built CLI).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { expect } from 'vitest';
import { cleanEnv, makeTempDir, runNavi, startNavi, type JsonObject, type NaviProcess } from '../support/cli.js';
import { databaseUrl } from '../support/databases.js';

export const ADMIN_URL = process.env.DATABASE_URL;

/** A fresh database on the test server; `drop()` removes it (connections and all). */
export async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = ADMIN_URL as string;
  const name = `navi_queue_${randomBytes(5).toString('hex')}`;
  const sql = postgres(admin, { max: 1, onnotice: () => undefined });
  try {
    await sql.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await sql.end();
  }
  return {
    url: databaseUrl(admin, name),
    drop: async () => {
      const s = postgres(admin, { max: 1, onnotice: () => undefined });
      try {
        await s.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await s.end();
      }
    },
  };
}

/** A git repository with `task.yaml`: each iteration's check commits, so the gate passes without a signal. */
export function taskRepo(): string {
  const dir = makeTempDir('queue-repo');
  const task = [
    'name: tick',
    'prompt: Say done.',
    'loop: { max_iterations: 3, exit_requires_explicit_signal: false }',
    'checks:',
    '  - { name: commit, run: "git commit -q --allow-empty -m tick" }',
    '',
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'task.yaml'), task);
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: dir, encoding: 'utf8' });
  git('init', '-q');
  git('config', 'user.email', 'queue@test');
  git('config', 'user.name', 'Queue Test');
  git('add', '-A');
  git('commit', '-qm', 'init');
  return dir;
}

export function queueEnv(url: string, ollama: string, extra: Record<string, string> = {}): Record<string, string> {
  // A short lease and quick polling: what takes minutes in production takes seconds here.
  return cleanEnv({ DATABASE_URL: url, OLLAMA_HOST: ollama, NAVI_QUEUE_POLL_MS: '100', NAVI_QUEUE_LEASE_S: '3', NAVI_QUEUE_CRON_TICK_MS: '200', ...extra });
}

const TIMEOUT_MS = 120_000;

export async function addJob(cwd: string, env: Record<string, string>, ...args: string[]): Promise<string> {
  const r = await runNavi(['queue', 'add', 'task.yaml', '-o', 'json', ...args], { cwd, env, timeoutMs: TIMEOUT_MS });
  expect(r.code, r.stderr).toBe(0);
  const id = r.events[0]?.id;
  expect(typeof id).toBe('string');
  return id as string;
}

export interface JobRow {
  id: string;
  status: string;
  attempts: number;
  worker: string | null;
  run_id: string | null;
  schedule_id: string | null;
}

export async function listJobs(cwd: string, env: Record<string, string>): Promise<JobRow[]> {
  const r = await runNavi(['queue', 'list', '-o', 'json'], { cwd, env, timeoutMs: TIMEOUT_MS });
  expect(r.code, r.stderr).toBe(0);
  return (r.events[0]?.jobs ?? []) as JobRow[];
}

/**
 * The queue's jobs read straight from the engine's table (cheap enough to poll; a `navi queue
 * list` process per poll would load a shared 2-core machine), in the shape `navi queue list` prints.
 */
export async function peekJobs(url: string): Promise<JobRow[]> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    const rows = await sql`SELECT id::text, state::text, retry_count, started_on, data FROM pgboss.job WHERE name = 'navi-loop'
                           UNION ALL SELECT id::text, state::text, retry_count, started_on, data FROM pgboss.archive WHERE name = 'navi-loop'`;
    const status: Record<string, string> = { created: 'queued', retry: 'queued', active: 'running' };
    return rows.map((r) => {
      const data = (r.data ?? {}) as Record<string, unknown>;
      return {
        id: String(r.id),
        status: status[String(r.state)] ?? String(r.state),
        attempts: r.started_on === null ? Number(r.retry_count) : Number(r.retry_count) + 1,
        worker: typeof data.worker === 'string' ? data.worker : null,
        run_id: typeof data.run_id === 'string' ? data.run_id : null,
        schedule_id: typeof data.schedule_id === 'string' ? data.schedule_id : null,
      };
    });
  } finally {
    await sql.end();
  }
}

/** Waits until `check` returns a value (not undefined): a condition, polled, with a hang guard far above the real time. */
export async function waitUntil<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = TIMEOUT_MS): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

export async function startWorker(cwd: string, env: Record<string, string>, ...args: string[]): Promise<NaviProcess> {
  // A private cache unless the test names one (to look into its clones and job logs).
  const cache = args.includes('--cache-dir') ? [] : ['--cache-dir', makeTempDir('queue-cache')];
  const w = startNavi(['worker', '-o', 'json', ...cache, ...args], { cwd, env, timeoutMs: 4 * TIMEOUT_MS });
  await w.waitForEvent('worker', (e) => e.event === 'worker_ready');
  return w;
}

/** The worker's events about jobs (`navi worker -o json`). */
export function workerEvents(w: NaviProcess, event: string): JsonObject[] {
  return w.events.filter((e) => e.type === 'worker' && e.event === event);
}
