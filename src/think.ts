/**
 * Ollama's `think` values, shared by the configuration (`llm.think`) and the model client.
 * api/types.go 1126-1229 (ThinkValue): a boolean or a level; `true` means "medium". `"max"`
 * exists since v0.22.0 (harmony maps it to "high"); navi offers the three levels every version
 * since v0.17.7 (`122c68c15`) accepts for every model. gpt-oss ignores booleans altogether
 * (docs/capabilities/thinking.mdx: it "requires think to be set to low/medium/high").
 */
export const THINK_LEVELS = ['low', 'medium', 'high'] as const;

export type ThinkLevel = (typeof THINK_LEVELS)[number];

/** `think` as it goes on the wire. */
export type ThinkValue = boolean | ThinkLevel;
