/**
 * The yargs options of `--record` / `--replay` / `--replay-timing`, shared by the commands that
 * call the model (`run`, `loop`, `sessions compact`); see `model-exchanges.ts`.
 */
import type { Argv } from 'yargs';

export function exchangeOptions<T>(y: Argv<T>): Argv<T> {
  return y
    .option('record', { type: 'string', describe: 'Write every model exchange of this run to FILE (JSONL, secrets redacted; docs/recording-format.md)' })
    .option('replay', { type: 'string', describe: 'Answer every model request from a recording made with --record, without Ollama; exit 2 on the first request that differs' })
    .option('replay-timing', { type: 'boolean', describe: 'With --replay: stream the answers with their recorded timing (default: at once)' }) as Argv<T>;
}
