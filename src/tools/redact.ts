/**
 * Secret redaction (SPEC §10): values of secret-looking environment variables never reach the
 * model, the database or any output.
 */

/** Names that mark an environment variable as secret. */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD/i;

/** Shorter values are too likely to be ordinary words or numbers ("true", "1234") to redact. */
const MIN_SECRET_LENGTH = 6;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Builds a function that replaces each secret value found in `env` by `[REDACTED:NAME]`.
 * One precompiled regex, longest values first so a secret containing another is replaced whole.
 */
export function createRedactor(env: Record<string, string | undefined>): (text: string) => string {
  const nameByValue = new Map<string, string>();
  for (const name of Object.keys(env).sort()) {
    const value = env[name];
    if (value === undefined || value.length < MIN_SECRET_LENGTH || !SECRET_NAME.test(name)) continue;
    if (!nameByValue.has(value)) nameByValue.set(value, name);
  }
  if (nameByValue.size === 0) return (text) => text;
  const values = [...nameByValue.keys()].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(values.map(escapeRegExp).join('|'), 'g');
  return (text) => text.replace(pattern, (value) => `[REDACTED:${nameByValue.get(value) ?? 'SECRET'}]`);
}
