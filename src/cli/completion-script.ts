/**
 * Shell completion for `navi completion bash|zsh`: a static script (no navi process per TAB
 * press, so completion is instant and opens nothing). It knows the commands, their
 * subcommands and flags, and the values of the flags that have fixed choices; file and
 * directory flags complete paths. zsh runs the same function through `bashcompinit`.
 * The flags come from the flag table (flags.ts); `test/cli/completion.test.ts` checks every flag
 * here against `--help`.
 */
import { FLAGS, globalFlags, spellings, type Flag } from './flags.js';

/** How a flag is offered: `--no-X` for a boolean that is on by default, else `--X` and its long aliases. */
function offered(flag: Flag): string[] {
  if (flag.kind === 'boolean' && flag.default === true) return [`--no-${flag.name}`];
  const long = spellings(flag).filter((s) => s.startsWith('--'));
  return flag.offerNegation === true ? [...long, `--no-${flag.name}`] : long;
}

/** Flags every command takes (the table's global ones, and --help, --version). */
export const GLOBAL_FLAGS: string[] = [...globalFlags().flatMap(offered), '--help', '--version'];

/** Top-level commands → their subcommands (the flags come from the table). */
const SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  run: [],
  loop: [],
  tasks: ['list', 'show', 'validate'],
  runs: ['list', 'show'],
  sessions: ['list', 'show', 'rm', 'compact'],
  profiles: ['list', 'show'],
  memory: ['list', 'forget'],
  db: ['migrate'],
  mcp: ['list', 'tools'],
  doctor: [],
  init: [],
  serve: [],
  completion: ['bash', 'zsh'],
};

/** The flags of a top-level command: its own and its subcommands' (`sessions` → `--limit`, `--record`…). */
function commandFlagsOf(command: string): string[] {
  const own = FLAGS.filter((f) => f.commands !== 'global' && f.commands.some((c) => c === command || c.startsWith(`${command} `)));
  return [...new Set(own.flatMap(offered))];
}

/** Commands → their subcommands and own flags. */
export const COMPLETION_TREE: Readonly<Record<string, { subcommands?: string[]; flags?: string[] }>> = Object.fromEntries(
  Object.entries(SUBCOMMANDS).map(([name, subs]) => {
    const flags = commandFlagsOf(name);
    return [name, { ...(subs.length > 0 ? { subcommands: [...subs] } : {}), ...(flags.length > 0 ? { flags } : {}) }];
  }),
);

/** The shipped profiles, offered after --profile (a project's own are typed). */
const PROFILE_NAMES = 'default coder researcher';

/** Flags followed by a value, and how to complete it: `files`, `dirs`, or the words to offer. */
const VALUE_FLAGS: Readonly<Record<string, string>> = Object.fromEntries(
  FLAGS.filter((f) => f.kind !== 'boolean').flatMap((f) => {
    const how = f.kind === 'choice' ? (f.choices ?? []).join(' ') : f.complete === 'profiles' ? PROFILE_NAMES : (f.complete ?? '');
    return spellings(f).map((s) => [s, how]);
  }),
);

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
