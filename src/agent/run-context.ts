/**
 * Per-run context (seed 000's ContextVars): which session, model and working directory the
 * code running right now belongs to. A sub-agent runs inside its own `runWithContext`, so the
 * parent's values come back by themselves when it returns or fails.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface RunContext {
  sessionId: string;
  model: string;
  cwd: string;
  user: string;
  /** Profile ids from the root agent down to the current one. */
  agentPath: string[];
}

const storage = new AsyncLocalStorage<RunContext>();

export function runWithContext<T>(ctx: RunContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

export function currentRunContext(): RunContext | undefined {
  return storage.getStore();
}
