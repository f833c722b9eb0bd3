/** `navi loop [task..]`: iterate on a task until its evidence passes the exit gate (commands/dispatch.ts, then loop.ts). */
import { commandFlags } from '../flags.js';
import { commandHelp } from '../help-layout.js';
import { handledBy, type NaviCommand } from './invocation.js';

export const loopModule: NaviCommand = {
  command: 'loop [task..]',
  describe: 'Loop mode: iterate on a task until evidence passes the exit gate',
  builder: (y) =>
    commandHelp(
      commandFlags(
        y.positional('task', { type: 'string', array: true, describe: 'A task file (tasks/fix.yaml), a task name (see: navi tasks list), or the task as free text in quotes' }),
        'loop',
      ),
      {
        path: 'loop',
        uses: ['db', 'ollama', 'profile'],
        examples: [
          ['navi loop tasks/fix-failing-tests.yaml', 'run a task file until its checks pass and the model signals exit'],
          ['navi loop "make npm test pass" --max-iterations 8 --never-pause', 'free text; overnight-safe'],
          ['navi loop --resume run_mikq3x2a0_7hq2 --extend 3', 'continue a run that hit max iterations'],
          ['navi loop --resume run_mikq3x2a0_7hq2 --clarify "the config lives in etc/"', 'continue a run that stagnated, telling the model what it missed'],
        ],
        epilog:
          'Exit codes: 0 completed (exit gate passed), 2 invalid input (also: an unknown run id), 3 max iterations ' +
          '(resumable), 4 aborted (user or stagnation), 5 budget exhausted (resumable), 75 Ollama unavailable ' +
          '(retry later), 130 interrupted (resumable).',
      },
    ),
  handler: handledBy('loop'),
};
