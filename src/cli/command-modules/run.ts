/** `navi run [prompt..]`: one agent turn on a prompt (commands/dispatch.ts, then run.ts). */
import { commandFlags } from '../flags.js';
import { commandHelp } from '../help-layout.js';
import { handledBy, type NaviCommand } from './invocation.js';

export const runModule: NaviCommand = {
  command: 'run [prompt..]',
  describe: 'One-shot: run one agent turn (full tool loop) on a prompt',
  builder: (y) =>
    commandHelp(
      commandFlags(
        y.positional('prompt', {
          type: 'string',
          array: true,
          describe: 'The prompt (else --file, else stdin). With piped stdin too, the prompt is the instruction and stdin the material (sent after it inside <stdin>…</stdin>)',
        }),
        'run',
      ),
      {
        path: 'run',
        uses: ['db', 'ollama', 'profile'],
        examples: [
          ['navi run "list the TODOs in src/"', ''],
          ['navi "list the TODOs in src/"', 'the same: navi "…" is navi run "…"'],
          ['git diff | navi run "review this diff"', 'instruction as the argument, the diff from stdin'],
          ['git diff | navi run -o json', 'prompt from stdin, one JSON result'],
          ['navi run --output-schema answer.schema.json -o json "…" | jq .structured', 'structured answer for a script'],
          ['navi run -c "now fix the first one"', 'continue the latest session here (or -s SESSION_ID)'],
        ],
        epilog:
          'Exit codes: 0 answered; 1 error (also: the model kept writing unusable tool calls or empty replies, or an answer that does not match --output-schema); ' +
          '2 invalid input (also: an unknown session or profile, a model that is not pulled or cannot call tools); ' +
          '3 incomplete (max iterations, or the answer was cut off at the output limit; continue with -s); ' +
          '75 Ollama unreachable or stopped answering (retry later); 130 interrupted.',
      },
    ),
  handler: handledBy('run'),
};
