/**
 * Shell completion for `navi completion bash|zsh`: a static script (no navi process per TAB
 * press, so completion is instant and opens nothing). It knows the commands, their
 * subcommands and flags, and the values of the flags that have fixed choices; file and
 * directory flags complete paths. zsh runs the same function through `bashcompinit`.
 * `test/cli/completion.test.ts` checks every flag here against `--help`, so it cannot drift.
 */

/** Flags every command takes (app.ts globalOptions). */
export const GLOBAL_FLAGS = [
  '--cwd',
  '--config',
  '--output',
  '--output-format',
  '--quiet',
  '--no-color',
  '--db',
  '--ollama-host',
  '--model',
  '--profile',
  '--help',
  '--version',
];

/** Commands → their subcommands and own flags. */
export const COMPLETION_TREE: Readonly<Record<string, { subcommands?: string[]; flags?: string[] }>> = {
  run: {
    flags: [
      '--file',
      '--session',
      '--continue',
      '--max-iterations',
      '--max-turns',
      '--no-loop',
      '--output-schema',
      '--output-last-message',
      '--append-system-prompt',
      '--allowed-tools',
      '--disallowed-tools',
      '--no-project-instructions',
      '--print',
      '--record',
      '--replay',
      '--replay-timing',
    ],
  },
  loop: {
    flags: [
      '--max-iterations',
      '--max-turns',
      '--approval',
      '--never-pause',
      '--strategy',
      '--decisions',
      '--resume',
      '--extend',
      '--clarify',
      '--max-tokens',
      '--deadline',
      '--iteration-timeout',
      '--no-project-instructions',
      '--append-system-prompt',
      '--record',
      '--replay',
      '--replay-timing',
      '--junit',
      '--summary',
    ],
  },
  tasks: { subcommands: ['list', 'show', 'validate'] },
  runs: { subcommands: ['list', 'show'], flags: ['--limit', '--format'] },
  sessions: { subcommands: ['list', 'show', 'rm', 'compact'], flags: ['--limit', '--record', '--replay', '--replay-timing'] },
  profiles: { subcommands: ['list', 'show'], flags: ['--no-project-instructions'] },
  memory: { subcommands: ['list', 'forget'] },
  db: { subcommands: ['migrate'] },
  mcp: { subcommands: ['list', 'tools'] },
  doctor: {},
  init: {},
  completion: { subcommands: ['bash', 'zsh'] },
};

/** Flags followed by a value, and how to complete it. */
const VALUE_FLAGS: Readonly<Record<string, string>> = {
  '--cwd': 'dirs',
  '--config': 'files',
  '--output': 'text json stream-json',
  '-o': 'text json stream-json',
  '--output-format': 'text json stream-json',
  '--db': '',
  '--ollama-host': '',
  '--model': '',
  '-m': '',
  '--profile': 'default coder researcher',
  '-p': 'default coder researcher',
  '--file': 'files',
  '-f': 'files',
  '--session': '',
  '-s': '',
  '--max-iterations': '',
  '--max-turns': '',
  '--output-schema': 'files',
  '--output-last-message': 'files',
  '--append-system-prompt': '',
  '--allowed-tools': '',
  '--disallowed-tools': '',
  '--approval': 'none strict periodic',
  '--strategy': 'combine radical reread',
  '--decisions': 'files',
  '--resume': '',
  '--extend': '',
  '--clarify': '',
  '--max-tokens': '',
  '--deadline': '',
  '--iteration-timeout': '',
  '--limit': '',
  '--record': 'files',
  '--replay': 'files',
  '--junit': 'files',
  '--summary': 'files',
  '--format': 'md junit json',
};

function caseArms(entries: Array<[string, string]>, indent: string): string {
  return entries.map(([pattern, body]) => `${indent}${pattern}) ${body} ;;`).join('\n');
}

function bashFunction(): string {
  const commands = Object.keys(COMPLETION_TREE).join(' ');
  const valueFlags = Object.keys(VALUE_FLAGS).join('|');
  const valueArms = Object.entries(VALUE_FLAGS).map(([flag, how]): [string, string] => {
    if (how === 'files') return [flag, 'COMPREPLY=($(compgen -f -- "$cur")); return'];
    if (how === 'dirs') return [flag, 'COMPREPLY=($(compgen -d -- "$cur")); return'];
    return [flag, `COMPREPLY=($(compgen -W "${how}" -- "$cur")); return`];
  });
  const subArms = Object.entries(COMPLETION_TREE)
    .filter(([, c]) => c.subcommands)
    .map(([name, c]): [string, string] => [name, `subs="${(c.subcommands ?? []).join(' ')}"`]);
  const flagArms = Object.entries(COMPLETION_TREE).map(([name, c]): [string, string] => [name, `flags="$flags ${(c.flags ?? []).join(' ')}"`]);
  return `_navi_completion() {
  local cur prev cmd="" sub="" subs="" flags="${GLOBAL_FLAGS.join(' ')}" i w skip=0
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  case "$prev" in
${caseArms(valueArms, '    ')}
  esac
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    if ((skip)); then skip=0; continue; fi
    case "$w" in
      ${valueFlags}) skip=1 ;;
      -*) ;;
      *) if [[ -z "$cmd" ]]; then cmd="$w"; elif [[ -z "$sub" ]]; then sub="$w"; fi ;;
    esac
  done
  case "$cmd" in
${caseArms(subArms, '    ')}
  esac
  case "$cmd" in
${caseArms(flagArms, '    ')}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  elif [[ -z "$cmd" ]]; then
    COMPREPLY=($(compgen -W "${commands}" -- "$cur"))
  elif [[ -n "$subs" && -z "$sub" ]]; then
    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}`;
}

/** The script for `shell`. */
export function completionScript(shell: 'bash' | 'zsh'): string {
  const body = bashFunction();
  if (shell === 'bash') {
    return `# navi completion for bash. Load it with: source <(navi completion bash)   (e.g. in ~/.bashrc)
${body}
complete -o default -F _navi_completion navi
`;
  }
  return `# navi completion for zsh. Load it with: source <(navi completion zsh)   (e.g. in ~/.zshrc)
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${body}
complete -o default -F _navi_completion navi
`;
}
