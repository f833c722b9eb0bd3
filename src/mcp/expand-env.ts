/**
 * `${NAME}` and `${NAME:-default}` in server settings (the `.mcp.json` convention), expanded
 * when the server starts from the environment navi runs in. A reference to a variable that is
 * not set (and has no default) is a start failure naming the variable, never an empty header.
 */

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Thrown for `${NAME}` when NAME is not set; the message says where it was used. */
export class MissingVariableError extends Error {}

/** `value` with its references replaced; `where` names the setting in the error (`headers.Authorization`). */
export function expandEnv(value: string, env: Record<string, string | undefined>, where: string): string {
  return value.replace(REFERENCE, (_match, name: string, fallback: string | undefined) => {
    const set = env[name];
    if (set !== undefined && set !== '') return set;
    if (fallback !== undefined) return fallback;
    throw new MissingVariableError(`${where} references \${${name}}, which is not set`);
  });
}

/** Every value of a string map expanded (`env`, `headers`). */
export function expandMap(values: Record<string, string> | undefined, env: Record<string, string | undefined>, where: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(values ?? {})) out[key] = expandEnv(value, env, `${where}.${key}`);
  return out;
}
