/**
 * Default values that more than one module needs (the config schema, `navi init`, the shell
 * tool, `navi doctor`). Values that only the schema needs live beside their field there.
 */

/** Ollama's own default listen address; `OLLAMA_HOST` and `--ollama-host` override it. */
export const DEFAULT_OLLAMA_HOST = 'http://127.0.0.1:11434';

/** Port Ollama listens on; a host given without a port (`OLLAMA_HOST=gpu-box`) gets this one, as Ollama's own client does (envconfig/config.go Host). */
export const DEFAULT_OLLAMA_PORT = 11434;

/** A small thinking model with tool calling that runs on a laptop GPU. */
export const DEFAULT_MODEL = 'qwen3:8b';

/** Profile used when neither `--profile` nor `default_profile` names another. */
export const DEFAULT_PROFILE_ID = 'default';

/**
 * Shell commands refused unless a config replaces the list (`tools.shell.deny`). The list lives
 * with the matcher that interprets it (`src/tools/shell-policy.ts`): its globs are written for
 * that matcher (`\*` is a literal star), so a second copy here could only drift out of step.
 */
export { DEFAULT_SHELL_DENY } from '../tools/shell-policy.js';
