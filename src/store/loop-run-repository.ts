/**
 * Loop runs and their iterations (SPEC §7, §9). The run row carries the counters a resumed run
 * restores; `commitIteration` writes an iteration and those counters in one transaction, which is
 * the loop's durability guarantee: a killed run resumes at the next iteration with exactly the
 * state the last committed one left, never with half an iteration.
 */
import { and, asc, desc, eq, sql } from 'drizzle-orm';
import type { PgUpdateSetSource } from 'drizzle-orm/pg-core';
import { StorageError } from '../errors.js';
import type { NaviDatabase } from './database.js';
import { guardQuery } from './driver-errors.js';
import {
  decodeJson,
  decodeNullableJson,
  encodeJson,
  encodeNullableJson,
  nullableText,
  pgText,
  wholeNumber,
} from './encoding.js';
import { newRunId } from './ids.js';
import { loopIterations, loopRuns } from './schema.js';
import type {
  LoopIterationRecord,
  LoopRunPatch,
  LoopRunRecord,
  LoopRunRepository,
  NewLoopIteration,
  NewLoopRun,
} from './types.js';

/** Loop-run repository over either driver. */
export function createLoopRunRepository(db: NaviDatabase): LoopRunRepository {
  return {
    async create(run: NewLoopRun): Promise<LoopRunRecord> {
      const id = run.id ?? newRunId();
      const values: typeof loopRuns.$inferInsert = {
        id,
        sessionId: run.sessionId,
        taskName: pgText(run.taskName),
        task: encodeJson(run.task, 'the loop task'),
        config: encodeJson(run.config, 'the loop configuration'),
        cwd: pgText(run.cwd),
        maxIterations: wholeNumber(run.maxIterations),
        maxTokens: run.maxTokens === undefined || run.maxTokens === null ? null : wholeNumber(run.maxTokens),
        deadlineAt: run.deadlineAt ?? null,
        gitHeadAtStart: nullableText(run.gitHeadAtStart),
      };
      const [row] = await guardQuery(
        'loopRuns.create',
        () => db.insert(loopRuns).values(values).returning(),
        (code) => {
          if (code === '23505') return new StorageError('run_exists', `Loop run ${id} already exists.`);
          if (code === '23503') return new StorageError('session_not_found', `Session ${run.sessionId} does not exist.`);
          return undefined;
        },
      );
      if (!row) throw new Error('insert returned no row');
      return toRunRecord(row);
    },

    async get(id: string): Promise<LoopRunRecord | null> {
      const rows = await guardQuery('loopRuns.get', () => db.select().from(loopRuns).where(eq(loopRuns.id, id)).limit(1));
      const row = rows[0];
      return row ? toRunRecord(row) : null;
    },

    async list(opts: { limit?: number } = {}): Promise<LoopRunRecord[]> {
      const query = db.select().from(loopRuns).orderBy(desc(loopRuns.startedAt), desc(loopRuns.id)).$dynamic();
      const rows = await guardQuery('loopRuns.list', () =>
        opts.limit !== undefined ? query.limit(Math.max(0, Math.floor(opts.limit))) : query,
      );
      return rows.map(toRunRecord);
    },

    async update(id: string, patch: LoopRunPatch): Promise<LoopRunRecord> {
      const set = patchValues(patch);
      const [row] = await guardQuery('loopRuns.update', () =>
        db.update(loopRuns).set(set).where(eq(loopRuns.id, id)).returning(),
      );
      if (!row) throw runNotFound(id);
      return toRunRecord(row);
    },

    async commitIteration(runId: string, iteration: NewLoopIteration, runPatch: LoopRunPatch): Promise<LoopRunRecord> {
      // Encoded before the transaction: a value that cannot be stored fails with nothing begun.
      const values = iterationValues(runId, iteration);
      const set = patchValues({ ...runPatch, iteration: iteration.iteration });
      return guardQuery(
        'loopRuns.commitIteration',
        () =>
          db.transaction(async (tx) => {
            // The run row first: its lock makes a second process committing the same iteration
            // wait here, then fail on the primary key below instead of interleaving.
            const [run] = await tx.update(loopRuns).set(set).where(eq(loopRuns.id, runId)).returning();
            if (!run) throw runNotFound(runId);
            await tx.insert(loopIterations).values(values);
            return toRunRecord(run);
          }),
        (code) => {
          if (code === '23505') {
            return new StorageError(
              'iteration_exists',
              `Iteration ${iteration.iteration} of loop run ${runId} is already stored; nothing was written.`,
            );
          }
          return code === '23503' ? runNotFound(runId) : undefined;
        },
      );
    },

    async settleIteration(runId: string, iteration: number, decision: unknown, runPatch: LoopRunPatch): Promise<LoopRunRecord> {
      const value = encodeNullableJson(decision, 'the iteration decision');
      const set = patchValues(runPatch);
      return guardQuery('loopRuns.settleIteration', () =>
        db.transaction(async (tx) => {
          const [run] = await tx.update(loopRuns).set(set).where(eq(loopRuns.id, runId)).returning();
          if (!run) throw runNotFound(runId);
          const rows = await tx
            .update(loopIterations)
            .set({ decision: value })
            .where(and(eq(loopIterations.runId, runId), eq(loopIterations.iteration, iteration)))
            .returning({ iteration: loopIterations.iteration });
          if (rows.length === 0) throw new StorageError('iteration_not_found', `Iteration ${iteration} of loop run ${runId} is not stored.`);
          return toRunRecord(run);
        }),
      );
    },

    async listIterations(runId: string): Promise<LoopIterationRecord[]> {
      const rows = await guardQuery('loopRuns.listIterations', () =>
        db.select().from(loopIterations).where(eq(loopIterations.runId, runId)).orderBy(asc(loopIterations.iteration)),
      );
      return rows.map(toIterationRecord);
    },
  };
}

function runNotFound(id: string): StorageError {
  return new StorageError('run_not_found', `Loop run ${id} does not exist.`);
}

/** The SET list of a patch: only the keys present, plus `updated_at`. */
function patchValues(patch: LoopRunPatch): PgUpdateSetSource<typeof loopRuns> {
  const set: PgUpdateSetSource<typeof loopRuns> = { updatedAt: sql`now()` };
  if (patch.status !== undefined) set.status = patch.status;
  if (patch.reason !== undefined) set.reason = nullableText(patch.reason);
  if (patch.iteration !== undefined) set.iteration = wholeNumber(patch.iteration);
  if (patch.maxIterations !== undefined) set.maxIterations = wholeNumber(patch.maxIterations);
  if (patch.stagnationCount !== undefined) set.stagnationCount = wholeNumber(patch.stagnationCount);
  if (patch.hashHistory !== undefined) set.hashHistory = encodeJson(patch.hashHistory, 'the hash history');
  if (patch.diversifications !== undefined) set.diversifications = wholeNumber(patch.diversifications);
  if (patch.promptTokens !== undefined) set.promptTokens = wholeNumber(patch.promptTokens);
  if (patch.completionTokens !== undefined) set.completionTokens = wholeNumber(patch.completionTokens);
  if (patch.maxTokens !== undefined) set.maxTokens = patch.maxTokens === null ? null : wholeNumber(patch.maxTokens);
  if (patch.deadlineAt !== undefined) set.deadlineAt = patch.deadlineAt;
  if (patch.config !== undefined) set.config = encodeJson(patch.config, 'the loop configuration');
  if (patch.finishedAt !== undefined) set.finishedAt = patch.finishedAt;
  return set;
}

function iterationValues(runId: string, it: NewLoopIteration): typeof loopIterations.$inferInsert {
  return {
    runId,
    iteration: wholeNumber(it.iteration),
    phase: pgText(it.phase),
    indicators: encodeJson(it.indicators, 'the indicators'),
    evidence: encodeJson(it.evidence, 'the evidence'),
    stateHash: pgText(it.stateHash),
    gateDecision: nullableText(it.gateDecision),
    gateReason: nullableText(it.gateReason),
    exitSignal: encodeNullableJson(it.exitSignal, 'the exit signal'),
    statusBlock: pgText(it.statusBlock),
    decision: encodeNullableJson(it.decision, 'the decision'),
    promptTokens: wholeNumber(it.promptTokens),
    completionTokens: wholeNumber(it.completionTokens),
    durationMs: wholeNumber(it.durationMs),
    startedAt: it.startedAt,
    finishedAt: it.finishedAt,
  };
}

function toRunRecord(row: typeof loopRuns.$inferSelect): LoopRunRecord {
  return {
    id: row.id,
    sessionId: row.sessionId,
    taskName: row.taskName,
    task: decodeJson(row.task),
    config: decodeJson(row.config),
    cwd: row.cwd,
    status: row.status,
    reason: row.reason,
    iteration: row.iteration,
    maxIterations: row.maxIterations,
    stagnationCount: row.stagnationCount,
    hashHistory: decodeJson(row.hashHistory) as string[],
    diversifications: row.diversifications,
    promptTokens: row.promptTokens,
    completionTokens: row.completionTokens,
    maxTokens: row.maxTokens,
    deadlineAt: row.deadlineAt,
    gitHeadAtStart: row.gitHeadAtStart,
    startedAt: row.startedAt,
    updatedAt: row.updatedAt,
    finishedAt: row.finishedAt,
  };
}

function toIterationRecord(row: typeof loopIterations.$inferSelect): LoopIterationRecord {
  return {
    runId: row.runId,
    iteration: row.iteration,
    phase: row.phase,
    indicators: decodeJson(row.indicators),
    evidence: decodeJson(row.evidence),
    stateHash: row.stateHash,
    gateDecision: row.gateDecision,
    gateReason: row.gateReason,
    exitSignal: decodeNullableJson(row.exitSignal),
    statusBlock: row.statusBlock,
    decision: decodeNullableJson(row.decision),
    promptTokens: row.promptTokens,
    completionTokens: row.completionTokens,
    durationMs: row.durationMs,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
  };
}
