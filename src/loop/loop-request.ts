/**
 * What starting a loop run takes, declared once (issue 35): `navi loop`'s flags become one, a
 * `POST /runs` body is one (the API's schema picks the fields a remote caller may set), and a
 * queued job carries one that the worker turns back into `navi loop`'s command line. One shape,
 * so the three ways in cannot drift apart — they did once, and a serve-started run lost its
 * sandbox on `--resume`. snake_case: it is data users see (API bodies, job data).
 */
import { z } from 'zod';
import { DIVERSIFY_STRATEGIES, ITERATION_APPROVALS } from '../config/schema.js';
import { SANDBOX_MODES } from '../sandbox/modes.js';

const positiveInt = z.number().int().min(1);

/** The options of a loop run besides its task (new runs; a resume takes the subset it allows). */
export const LoopOptionsSchema = z.strictObject({
  /** The Ollama model; else the config's. */
  model: z.string().min(1).optional(),
  /** A profile id; else the task's, else the config's `default_profile`. */
  profile: z.string().min(1).optional(),
  /** `loop_mode.max_iterations` for this run. */
  max_iterations: positiveInt.optional(),
  /** Token budget of the whole run. */
  max_tokens: positiveInt.optional(),
  /** How long the whole run may take (a duration: 30m, 8h). */
  deadline: z.string().optional().describe('e.g. 30m, 8h'),
  /** How long one iteration's agent turn may take (a duration). */
  iteration_timeout: z.string().optional().describe('e.g. 10m'),
  /** A decisions file (JSON lines) answering the run's prompts; `-` is stdin (`navi loop` only). */
  decisions: z.string().min(1).optional(),
  /** `loop_mode.iteration_approval` for this run. */
  approval: z.enum(ITERATION_APPROVALS).optional(),
  /** `loop_mode.stagnation_diversify_strategy` for this run. */
  strategy: z.enum(DIVERSIFY_STRATEGIES).optional(),
  /** `--sandbox`: above the task's and the config's. */
  sandbox: z.enum(SANDBOX_MODES).optional(),
  /** `loop_mode.never_pause_on_stagnation` for this run. */
  never_pause: z.boolean().optional(),
  /** Notification targets added to the config's and the task's (`--notify URL`). */
  notify: z.array(z.string().min(1)).optional(),
});

export type LoopOptions = z.infer<typeof LoopOptionsSchema>;

/** The options in a stable order (the schema's): a job's `navi loop` command line lists them so. */
export const LOOP_OPTION_KEYS = Object.keys(LoopOptionsSchema.shape) as Array<keyof LoopOptions>;

/** A new loop run: its task and options. */
export const LoopRequestSchema = LoopOptionsSchema.extend({
  /** A task file path or name (as `navi loop tasks/x.yaml`), or the task as free text. */
  task: z.string().trim().min(1, 'task must name a task file or give the task text'),
});

export type LoopRequest = z.infer<typeof LoopRequestSchema>;

/** A stored run to continue (`navi loop --resume`), with the options a resume may change. */
export interface LoopResumeRequest extends Pick<LoopOptions, 'profile' | 'model' | 'max_tokens' | 'deadline' | 'iteration_timeout' | 'sandbox' | 'decisions' | 'notify'> {
  run_id: string;
  /** More iterations than the run had (`--extend N`). */
  extend?: number;
  /** Told to the model in the next iteration (`--clarify TEXT`). */
  clarify?: string;
}

/** Options a resumed run refuses: it keeps the loop settings it started with. */
export const NEW_RUN_ONLY = ['max_iterations', 'approval', 'never_pause', 'strategy'] as const satisfies ReadonlyArray<keyof LoopOptions>;

/** The loop_mode keys the request sets, as the override above the task's `loop:` block. */
export function loopModeValues(o: Pick<LoopOptions, (typeof NEW_RUN_ONLY)[number]>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  if (o.max_iterations !== undefined) values.max_iterations = o.max_iterations;
  if (o.approval !== undefined) values.iteration_approval = o.approval;
  if (o.never_pause !== undefined) values.never_pause_on_stagnation = o.never_pause;
  if (o.strategy !== undefined) values.stagnation_diversify_strategy = o.strategy;
  return values;
}
