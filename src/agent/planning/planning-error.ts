/**
 * The planner could not produce a usable plan. A plain Error (not a NaviError): the `plan` tool
 * turns it into a failed tool result the model reads, it never ends the run.
 */
export class PlanningError extends Error {
  /** What was wrong with the model's output, one entry per problem (empty for setup failures). */
  readonly problems: string[];

  constructor(message: string, problems: string[] = [], options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PlanningError';
    this.problems = problems;
  }
}
