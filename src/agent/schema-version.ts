/**
 * The event schema's version, in a module of its own: every command stamps it on its JSON output,
 * and importing it from events.ts would build all the event schemas (zod) at start-up for a number.
 */

/** Bumped only on a breaking change to an existing event's fields. */
export const SCHEMA_VERSION = 1;
