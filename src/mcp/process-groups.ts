/**
 * Process groups of the MCP servers navi started. Whatever way navi leaves (a normal end, a
 * second Ctrl-C that exits at once, an uncaught error), the groups still alive get SIGKILL on
 * the way out: no server outlives the run that started it.
 */

const live = new Set<number>();
let hooked = false;

/** Signals every process in the group led by `pid`; a group that is gone already is fine. */
export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: nothing left in the group.
  }
}

export function trackGroup(pid: number): void {
  live.add(pid);
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const group of live) killGroup(group, 'SIGKILL');
  });
}

export function untrackGroup(pid: number): void {
  live.delete(pid);
}
