/**
 * What each command runs: its implementation in src/cli/commands/, imported only when that
 * command runs (start-up time: `--help` and light commands load no database or model code; each
 * `import()` is a lazy chunk of the bundle). The bin's `Commands`; the command modules only name
 * their command (invocation.ts), so a test that parses reaches none of this.
 */
import { loopCommand, runCommand } from '../commands/dispatch.js';
import { runFast } from '../run-entry.js';
import type { CommandHandler, CommandName, Commands } from './invocation.js';

const HANDLERS: Readonly<Record<CommandName, () => Promise<CommandHandler>>> = {
  // dispatch.ts is light (run.ts and loop.ts load when they run), and the run entry holds it too.
  run: () => Promise.resolve(runCommand),
  loop: () => Promise.resolve(loopCommand),
  'tasks list': async () => (await import('../commands/tasks.js')).tasksList,
  'tasks show': async () => (await import('../commands/tasks.js')).tasksShow,
  'tasks validate': async () => (await import('../commands/tasks.js')).tasksValidate,
  'runs list': async () => (await import('../commands/runs.js')).runsList,
  'runs show': async () => (await import('../commands/runs.js')).runsShow,
  'queue add': async () => (await import('../commands/queue.js')).queueAdd,
  'queue list': async () => (await import('../commands/queue.js')).queueList,
  'queue cancel': async () => (await import('../commands/queue.js')).queueCancel,
  worker: async () => (await import('../commands/worker.js')).workerCommand,
  'sessions list': async () => (await import('../commands/sessions.js')).sessionsList,
  'sessions show': async () => (await import('../commands/sessions.js')).sessionsShow,
  'sessions rm': async () => (await import('../commands/sessions.js')).sessionsRemove,
  'sessions compact': async () => (await import('../commands/compact.js')).sessionsCompact,
  'profiles list': async () => (await import('../commands/profiles.js')).profilesList,
  'profiles show': async () => (await import('../commands/profiles.js')).profilesShow,
  'memory list': async () => (await import('../commands/memory.js')).memoryList,
  'memory forget': async () => (await import('../commands/memory.js')).memoryForget,
  'mcp list': async () => (await import('../commands/mcp.js')).mcpList,
  'mcp tools': async () => (await import('../commands/mcp.js')).mcpTools,
  'db migrate': async () => (await import('../commands/db.js')).dbMigrate,
  completion: async () => (await import('../commands/completion.js')).completionCommand,
  serve: async () => (await import('../commands/serve.js')).serveCommand,
  doctor: async () => (await import('../commands/doctor.js')).doctorCommand,
  init: async () => (await import('../commands/init.js')).initCommand,
};

/** navi's commands as the bin runs them. */
export const NAVI_COMMANDS: Commands = {
  runFast,
  async run(command, argv, host) {
    const handler = await HANDLERS[command]();
    return handler(argv, host);
  },
};
