/**
 * Every top-level command as a yargs command module, in the order `navi --help` lists them
 * (the words are `COMMANDS` in shorthand.ts). Each module's handler loads its implementation
 * (src/cli/commands/) only when it runs.
 */
import { completionModule } from './completion.js';
import { dbModule } from './db.js';
import { doctorModule } from './doctor.js';
import { initModule } from './init.js';
import type { NaviCommand } from './invocation.js';
import { loopModule } from './loop.js';
import { mcpModule } from './mcp.js';
import { memoryModule } from './memory.js';
import { profilesModule } from './profiles.js';
import { queueModule, workerModule } from './queue.js';
import { runModule } from './run.js';
import { runsModule } from './runs.js';
import { serveModule } from './serve.js';
import { sessionsModule } from './sessions.js';
import { tasksModule } from './tasks.js';

export const COMMAND_MODULES: readonly NaviCommand[] = [
  runModule,
  loopModule,
  tasksModule,
  runsModule,
  queueModule,
  workerModule,
  sessionsModule,
  profilesModule,
  memoryModule,
  mcpModule,
  dbModule,
  completionModule,
  serveModule,
  doctorModule,
  initModule,
];
