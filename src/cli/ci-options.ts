/**
 * yargs options for CI use: `--record` / `--replay` / `--replay-timing` (commands that call the
 * model: `run`, `loop`, `sessions compact`; see `model-exchanges.ts`) and the loop's reports.
 */
import type { Argv } from 'yargs';

export function exchangeOptions<T>(y: Argv<T>): Argv<T> {
  return y
    .option('record', { type: 'string', requiresArg: true, describe: 'Write every model exchange of this run to FILE (JSONL, secrets redacted; docs/recording-format.md)' })
    .option('replay', { type: 'string', requiresArg: true, describe: 'Answer every model request from a recording made with --record, without Ollama; exit 2 on the first request that differs' })
    .option('replay-timing', { type: 'boolean', describe: 'With --replay: stream the answers with their recorded timing (default: at once)' });
}

/** `navi loop --junit FILE --summary FILE` (see `loop-reports.ts`). */
export function reportOptions<T>(y: Argv<T>): Argv<T> {
  return y
    .option('junit', { type: 'string', requiresArg: true, describe: 'Write a JUnit XML report of the run to FILE (a case per check per iteration, and the exit gate)' })
    .option('summary', { type: 'string', requiresArg: true, describe: 'Write a Markdown summary of the run to FILE (also appended to $GITHUB_STEP_SUMMARY when set)' });
}
