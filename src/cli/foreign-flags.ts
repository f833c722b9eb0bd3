/**
 * Flags of claude -p, codex exec and gemini -p that navi does not take (issue 18 item 21), each
 * with what navi does instead: a CI job copied from those tools fails with exit 2 and the way
 * to say it to navi, not a bare "Unknown argument". The ones navi has are in flags.ts.
 * Sources: the tools' CLI references (claude code "CLI reference", `codex exec --help`,
 * gemini-cli docs/cli "Command-line arguments").
 */

const NO_PROMPTS =
  'navi never asks before a tool call: the shell follows tools.shell.allow/deny in .nav-config.json, and --allowed-tools/--disallowed-tools narrow the tools';

/** Flag (as yargs names it: no dashes) → [the tools that have it, what navi does instead]. */
export const FOREIGN_FLAGS: Readonly<Record<string, readonly [from: string, instead: string]>> = {
  'permission-mode': ['claude -p', NO_PROMPTS],
  'dangerously-skip-permissions': ['claude -p', NO_PROMPTS],
  'dangerously-bypass-approvals-and-sandbox': ['codex exec', NO_PROMPTS],
  'full-auto': ['codex exec', NO_PROMPTS],
  'ask-for-approval': ['codex exec', NO_PROMPTS],
  a: ['codex exec -a / gemini -a', `${NO_PROMPTS}; the model reads files with its tools when it needs them`],
  yolo: ['gemini -p / codex', NO_PROMPTS],
  y: ['gemini -p', NO_PROMPTS],
  'approval-mode': ['gemini -p', NO_PROMPTS],
  'fallback-model': ['claude -p', 'one model per run: -m NAME (navi doctor checks it)'],
  'input-format': ['claude -p', 'the prompt is text: an argument, --file FILE, or stdin'],
  'include-partial-messages': ['claude -p', '-o stream-json already streams the answer as text_delta events'],
  settings: ['claude -p', '--config FILE (a .nav-config.json)'],
  'session-id': ['claude -p', 'navi names each session; continue one with --session ID (or -c for the latest here)'],
  'fork-session': ['claude -p', 'continue a session with --session ID; it grows, it is not copied'],
  'strict-mcp-config': ['claude -p', 'MCP servers come from .nav-config.json, .mcp.json and --mcp-config FILE; a profile\'s tools.mcp narrows them'],
  'max-budget-usd': ['claude -p', 'a local model costs no money; navi loop --max-tokens N caps the tokens'],
  agents: ['claude -p', 'profiles: profiles/<id>/ in the project, chosen with -p ID; the model spawns sub-agents with spawn_agent'],
  tools: ['claude -p', '--allowed-tools LIST'],
  debug: ['claude -p / gemini -p', 'NAVI_DEBUG=1 adds stack traces; -o stream-json shows every event'],
  d: ['gemini -p', 'NAVI_DEBUG=1 adds stack traces; -o stream-json shows every event'],
  'skip-git-repo-check': ['codex exec', 'navi runs in any directory: there is nothing to skip (drop the flag)'],
  oss: ['codex exec', 'navi always runs on Ollama (--ollama-host URL)'],
  'local-provider': ['codex exec', 'navi always runs on Ollama (--ollama-host URL)'],
  cd: ['codex exec', '--cwd DIR'],
  C: ['codex exec', '--cwd DIR'],
  image: ['codex exec', 'navi sends text only; the model can read files in --cwd with its tools'],
  i: ['codex exec -i / gemini -i', 'navi runs headless: one prompt per run (navi run "…"); continue with --session ID'],
  ephemeral: ['codex exec', 'navi stores every session; delete one with navi sessions rm ID'],
  last: ['codex exec resume', '-c/--continue (the latest session started here)'],
  'output-file': ['', '--output-last-message FILE'],
  'include-directories': ['gemini -p', '--add-dir DIR (a directory inside --cwd) or --cwd DIR (one that holds them all)'],
  'all-files': ['gemini -p', 'the model reads files with its tools when it needs them'],
  checkpointing: ['gemini -p', 'navi loop commits each iteration in git; a one-shot edits the files in place'],
  'prompt-interactive': ['gemini -p', 'navi runs headless: one prompt per run (navi run "…"); continue with --session ID'],
  prompt: ['gemini -p', 'the prompt is the argument: navi "PROMPT" (or navi run "PROMPT")'],
  extensions: ['gemini -p', 'tools: tools/ in the project (user tools) and MCP servers (--mcp-config FILE)'],
  e: ['gemini -p', 'tools: tools/ in the project (user tools) and MCP servers (--mcp-config FILE)'],
  'allowed-mcp-server-names': ['gemini -p', "a profile's tools.mcp lists the servers it may use"],
  'skip-trust': ['gemini -p', 'navi trusts the working directory\'s .nav-config.json, AGENTS.md and tools/ (README "Security")'],
  'show-memory-usage': ['gemini -p', 'no such display; navi run -o json reports tokens and duration'],
  telemetry: ['gemini -p', 'navi sends no telemetry'],
};

/** What to say about a flag navi does not take, or null when it is not one of theirs. */
export function foreignFlagHint(name: string): string | null {
  const entry = FOREIGN_FLAGS[name];
  if (entry === undefined) return null;
  const [from, instead] = entry;
  const typed = name.length === 1 ? `-${name}` : `--${name}`;
  return `${typed}${from !== '' ? ` (${from})` : ''}: navi does not take it; instead: ${instead}.`;
}
