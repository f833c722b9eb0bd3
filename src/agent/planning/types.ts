/**
 * Shapes shared by the planning pipeline (seed 000 "Planning"): the Phase 1 analysis, the
 * Phase 3 execution plan and the step executors.
 */

/** Phase 1 classification; drives plan depth and the tool's follow-up instruction. */
export type Complexity = 'simple' | 'medium' | 'complex';

/** Phase 1 output, parsed from the model's text sections. */
export interface Analysis {
  /** The request in one sentence ("" when the model gave none). */
  task: string;
  /** The observable end state. */
  goal: string;
  unknowns: string[];
  resources: string[];
  knowledgeRules: string[];
  complexity: Complexity;
  subtasks: string[];
  commitments: string[];
  /** The model answered DIRECT (trivial subtask); honoured only for sub-agents. */
  direct: boolean;
}

/** Who carries out a step: one tool call, a sub-agent (spawn_agent) or the agent inline. */
export type Executor = { kind: 'tool'; name: string } | { kind: 'agent'; profile: string } | { kind: 'self' };

/** One numbered plan step. */
export interface PlanStep {
  /** 1-based position (renumbered from the model's output). */
  n: number;
  /** The action, without its executor marker. */
  text: string;
  executor: Executor;
}

/** Phase 3 output. */
export interface ExecutionPlan {
  milestones: string[];
  steps: PlanStep[];
}

/** Hard cap on plan length (seed: "hard maximum: 20 steps"). */
export const MAX_STEPS = 20;

/** Step-count range asked for per complexity (seed: simple 1-3, medium 5-9, complex 8-20). */
export const STEP_RANGE: Readonly<Record<Complexity, readonly [number, number]>> = {
  simple: [1, 3],
  medium: [5, 9],
  complex: [8, 20],
};
