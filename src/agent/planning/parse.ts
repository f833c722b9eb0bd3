/**
 * Robust readers for the planner model's text: `parseAnalysis` (Phase 1 sections) and
 * `parseExecutionPlan` (Phase 3 milestones and steps). Both tolerate markdown noise, `<think>`
 * blocks and fenced answers; see each module for what counts as a problem.
 */
export { parseAnalysis, type AnalysisParse, type ParsedAnalysis } from './parse-analysis.js';
export { parseExecutionPlan, type ParsedPlan, type PlanParse, type PlanParseOptions } from './parse-plan.js';
