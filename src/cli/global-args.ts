/** Flags every command accepts (SPEC §3). */
export interface GlobalArgs {
  cwd?: string;
  config?: string;
  output: 'text' | 'json' | 'stream-json';
  quiet: boolean;
  color: boolean;
  db?: string;
  ollamaHost?: string;
  model?: string;
  profile?: string;
  /** `--record FILE` / `--replay FILE` / `--replay-timing` (commands that call the model). */
  record?: string;
  replay?: string;
  replayTiming?: boolean;
  /** `--no-project-instructions` sets false (run, loop, profiles show): no AGENTS.md/CLAUDE.md/GEMINI.md. */
  projectInstructions?: boolean;
  /** `--append-system-prompt TEXT` (run, loop): appended to the system message for this run. */
  appendSystemPrompt?: string;
}
