/** Test fakes for the tools layer: an in-memory state store and a ToolContext builder. */
import { readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ScratchpadEntry, SessionStateStore, TodoItem, ToolContext, ToolSideEvent } from '../../src/tools/types.js';

/** SessionStateStore kept in maps; copies on the way in and out, as a database would. */
export class MemoryStateStore implements SessionStateStore {
  readonly todos = new Map<string, TodoItem[]>();
  readonly scratchpads = new Map<string, ScratchpadEntry[]>();

  getTodos(sessionId: string): Promise<TodoItem[]> {
    return Promise.resolve(structuredClone(this.todos.get(sessionId) ?? []));
  }
  setTodos(sessionId: string, items: TodoItem[]): Promise<void> {
    this.todos.set(sessionId, structuredClone(items));
    return Promise.resolve();
  }
  getScratchpad(sessionId: string): Promise<ScratchpadEntry[]> {
    return Promise.resolve(structuredClone(this.scratchpads.get(sessionId) ?? []));
  }
  setScratchpad(sessionId: string, entries: ScratchpadEntry[]): Promise<void> {
    this.scratchpads.set(sessionId, structuredClone(entries));
    return Promise.resolve();
  }
}

export interface TestContext extends ToolContext {
  events: ToolSideEvent[];
  store: MemoryStateStore;
}

/** A context rooted at `cwd` with generous shell limits; override any field. */
export function makeContext(cwd: string, overrides: Partial<ToolContext> = {}): TestContext {
  const events: ToolSideEvent[] = [];
  const store = new MemoryStateStore();
  return {
    cwd,
    sessionId: 'session-1',
    signal: new AbortController().signal,
    state: store,
    shell: { allow: [], deny: [], timeoutS: 30, maxOutputBytes: 64 * 1024 },
    redact: (text) => text,
    emit: (event) => events.push(event),
    interactive: false,
    ...overrides,
    events,
    store,
  };
}

/** A fresh directory under the OS temp dir (real path, so assertions compare cleanly). */
export async function tempDir(prefix = 'navi-tools-'): Promise<string> {
  return realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/**
 * True while a process with this pid is alive. A zombie counts as gone: it has exited and only
 * waits for whatever PID 1 is in this machine to reap it.
 */
export function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Polls `check` until it returns true or `timeoutMs` passes; returns the last result. */
export async function waitFor(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return check();
}
