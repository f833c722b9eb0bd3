/**
 * Planner prompts live in `prompts/planning/*.md` at the repository (package) root, not in code
 * strings, so they can be tuned without touching TypeScript.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { PlanningError } from './planning-error.js';

/** The prompt files the pipeline reads (file name without `.md`). */
export type PlanningPromptName = 'analysis' | 'direct-option' | 'execution' | 'execution-input' | 'replan' | 'repair';

/**
 * The prompt directory for a module at `moduleUrl`. Both `src/agent/planning/*.ts` (tests, tsx)
 * and `dist/agent/planning/*.js` (the built CLI) sit three levels below the root, so one
 * relative URL serves both layouts.
 */
export function planningPromptDir(moduleUrl: string | URL = import.meta.url): URL {
  return new URL('../../../prompts/planning/', moduleUrl);
}

// Prompt files never change during a process; re-reading them per plan call is wasted I/O.
const cache = new Map<string, Promise<string>>();

/** Reads one prompt file (cached). Throws `PlanningError` naming the path when it is missing. */
export function loadPlanningPrompt(name: PlanningPromptName, dir: URL = planningPromptDir()): Promise<string> {
  const url = new URL(`${name}.md`, dir);
  const cached = cache.get(url.href);
  if (cached) return cached;
  const loading = readFile(url, 'utf8').catch((err: unknown) => {
    cache.delete(url.href);
    throw new PlanningError(
      `planning prompt file missing: ${fileURLToPath(url)} (prompts/planning/ must sit next to dist/; reinstall navi)`,
      [],
      { cause: err },
    );
  });
  cache.set(url.href, loading);
  return loading;
}

/**
 * Replaces every `{{name}}` in `template` with `vars[name]`, in one pass (a value that itself
 * contains `{{x}}` is inserted verbatim). An unknown placeholder throws: it is a typo in a
 * prompt file, and sending it to the model would silently degrade the plan.
 */
export function fillTemplate(template: string, vars: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{\s*([a-z0-9_]+)\s*\}\}/gi, (_match, name: string) => {
    const value = Object.hasOwn(vars, name) ? vars[name] : undefined;
    if (value === undefined) throw new Error(`prompt template placeholder {{${name}}} has no value`);
    return value;
  });
}
