/**
 * The lease a worker keeps renewing (issue 21). Why pg-boss, and why this file exists:
 *
 * - graphile-worker takes a job back only after a fixed 4 h of silence (and 0.17+ needs Node 22);
 *   an overnight loop needs "taken over within minutes of its machine dying, never while alive".
 * - pg-boss 10 (Node 20) has the rest — `expireInSeconds` with its maintenance moving an expired
 *   active job to `retry`, priorities, cancel, an archive — but the expiry counts from
 *   `started_on` and nothing renews it (heartbeats are not in the 10.x line).
 *
 * So a job is sent with `expire_in` = the lease, and the worker renews it by moving the expiry
 * forward — one UPDATE of the engine's own `job` row, nothing else of pg-boss changed:
 * `expire_in = (now() - started_on) + lease`, only while the row is active *and ours* (the
 * worker's name in `data.worker`, written when it took the job). pg-boss's maintenance does the
 * takeover. A renewal that touches no row means the job was cancelled or already taken: the
 * worker stops its loop.
 */
import type PgBoss from 'pg-boss';
import { QUEUE, SCHEMA } from './engine.js';

type Db = PgBoss.Db;

/** The engine's job table (partitioned by queue in pg-boss 10: the parent routes the UPDATE). */
const JOB = `${SCHEMA}.job`;

/**
 * Records who took the job and how it is going (`worker`, `run_id`, `worktree`) in the job's own
 * data, which pg-boss carries over retries: the next worker reads `run_id` there to resume.
 * Returns false when the job is no longer active under this worker.
 */
export async function patchJobData(db: Db, id: string, worker: string, patch: Record<string, unknown>): Promise<boolean> {
  const { rows } = await db.executeSql(
    `UPDATE ${JOB} SET data = COALESCE(data, '{}'::jsonb) || $3::jsonb
      WHERE name = $1 AND id = $2::uuid AND state = 'active' AND data->>'worker' = $4 RETURNING id`,
    [QUEUE, id, JSON.stringify(patch), worker],
  );
  return rows.length > 0;
}

/** Claims a job just fetched: its data names this worker, and its lease starts now. */
export async function claimJob(db: Db, id: string, worker: string, leaseSeconds: number): Promise<boolean> {
  const { rows } = await db.executeSql(
    `UPDATE ${JOB} SET data = COALESCE(data, '{}'::jsonb) || jsonb_build_object('worker', $3::text),
            expire_in = (now() - started_on) + make_interval(secs => $4)
      WHERE name = $1 AND id = $2::uuid AND state = 'active' RETURNING id`,
    [QUEUE, id, worker, leaseSeconds],
  );
  return rows.length > 0;
}

/** Moves the job's expiry to `lease` from now; false when it is no longer this worker's active job. */
export async function renewLease(db: Db, id: string, worker: string, leaseSeconds: number): Promise<boolean> {
  const { rows } = await db.executeSql(
    `UPDATE ${JOB} SET expire_in = (now() - started_on) + make_interval(secs => $4)
      WHERE name = $1 AND id = $2::uuid AND state = 'active' AND data->>'worker' = $3 RETURNING id`,
    [QUEUE, id, worker, leaseSeconds],
  );
  return rows.length > 0;
}

/**
 * Fails the job for good (a loop that ended incomplete, aborted or refused its flags: retrying
 * would only repeat it): pg-boss's fail retries while `retry_count < retry_limit`, so the limit is
 * lowered to the count first.
 */
export async function failForGood(boss: PgBoss, id: string, worker: string, output: Record<string, unknown>): Promise<void> {
  await boss.getDb().executeSql(
    `UPDATE ${JOB} SET retry_limit = retry_count WHERE name = $1 AND id = $2::uuid AND state = 'active' AND data->>'worker' = $3`,
    [QUEUE, id, worker],
  );
  await boss.fail(QUEUE, id, output);
}

/**
 * Hands the job back (`retry`) for another worker, after `delaySeconds` (0: at once). Only while
 * it is still this worker's: a job whose lease ran out is the engine's again.
 */
export async function handBack(boss: PgBoss, id: string, worker: string, output: Record<string, unknown>, delaySeconds = 0): Promise<boolean> {
  if (!(await renewLease(boss.getDb(), id, worker, 60))) return false;
  await boss.fail(QUEUE, id, output);
  if (delaySeconds > 0) {
    await boss.getDb().executeSql(`UPDATE ${JOB} SET start_after = now() + make_interval(secs => $3) WHERE name = $1 AND id = $2::uuid AND state = 'retry'`, [
      QUEUE,
      id,
      delaySeconds,
    ]);
  }
  return true;
}

/** A resumed run continues in this worker's worktree: the loop reads its directory from the run. */
export async function moveRun(db: Db, runId: string, cwd: string): Promise<void> {
  await db.executeSql(`UPDATE loop_runs SET cwd = $2 WHERE id = $1`, [runId, cwd]);
}
