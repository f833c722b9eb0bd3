/**
 * An MCP tool's `inputSchema` as sent to Ollama. Ollama decodes a request's tool schemas into
 * fixed Go structs (api/types.go `ToolFunctionParameters`, `ToolProperty`: type, description,
 * enum, properties, required, items, anyOf) and renders those into the prompt: any other keyword
 * is dropped on the way, and a `$ref` points at `$defs` the model never sees. So the schema sent
 * keeps exactly what survives — with local `$ref`s inlined, `oneOf` as `anyOf`, `const` as a
 * one-value `enum`, `allOf` merged — and every byte of it reaches the model. The server's own
 * schema, untouched, is what ajv checks the model's arguments against before a call.
 */
import { isRecord } from '../util/guards.js';

/** Keywords Ollama keeps for a property (besides the ones rewritten below). */
const KEPT = ['type', 'description', 'enum', 'required'] as const;

/** `$ref` chains deeper than this (recursive schemas) stop as an untyped `{}` plus the description. */
const MAX_REF_DEPTH = 4;

type Json = Record<string, unknown>;

function resolvePointer(root: Json, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  let current: unknown = root;
  for (const raw of ref.slice(1).split('/').filter((s) => s !== '')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

/** Merges `allOf` members into one schema (properties and required combined; the rest first wins). */
function mergeAll(parts: readonly Json[]): Json {
  const out: Json = {};
  const properties: Json = {};
  const required = new Set<string>();
  for (const part of parts) {
    for (const [key, value] of Object.entries(part)) {
      if (key === 'properties' && isRecord(value)) {
        Object.assign(properties, value);
      } else if (key === 'required' && Array.isArray(value)) {
        for (const r of value) if (typeof r === 'string') required.add(r);
      } else if (!(key in out)) {
        out[key] = value;
      }
    }
  }
  if (Object.keys(properties).length > 0) out.properties = properties;
  if (required.size > 0) out.required = [...required];
  return out;
}

function convert(node: unknown, root: Json, depth: number): Json {
  if (!isRecord(node)) return {};
  let schema: Json = node;
  if (typeof schema.$ref === 'string') {
    const target = depth < MAX_REF_DEPTH ? resolvePointer(root, schema.$ref) : undefined;
    const { $ref: _ref, ...rest } = schema;
    schema = isRecord(target) ? { ...target, ...rest } : rest;
    depth++;
  }
  if (Array.isArray(schema.allOf)) {
    const { allOf, ...rest } = schema;
    schema = mergeAll([rest, ...allOf.filter(isRecord).map((part) => convert(part, root, depth))]);
  }
  const out: Json = {};
  for (const key of KEPT) {
    const value = schema[key];
    if (value === undefined) continue;
    if (key === 'type' && !(typeof value === 'string' || (Array.isArray(value) && value.every((t) => typeof t === 'string')))) continue;
    if (key === 'description' && typeof value !== 'string') continue;
    if ((key === 'enum' || key === 'required') && !Array.isArray(value)) continue;
    if (key === 'required' && !(value as unknown[]).every((r) => typeof r === 'string')) continue;
    out[key] = value;
  }
  if (out.enum === undefined && schema.const !== undefined) out.enum = [schema.const];
  if (isRecord(schema.properties)) {
    const properties: Json = {};
    for (const [name, child] of Object.entries(schema.properties)) properties[name] = convert(child, root, depth);
    out.properties = properties;
  }
  if (schema.items !== undefined) {
    out.items = Array.isArray(schema.items) ? convert(schema.items[0], root, depth) : convert(schema.items, root, depth);
  }
  const alternatives = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (alternatives) {
    const converted = alternatives.map((alt) => convert(alt, root, depth));
    // `anyOf: [X, {type: "null"}]` (an optional value, as pydantic writes it) reads better as X.
    const nonNull = converted.filter((alt) => alt.type !== 'null');
    if (nonNull.length === 1 && out.type === undefined) Object.assign(out, { ...nonNull[0], ...out });
    else out.anyOf = converted;
  }
  return out;
}

/**
 * What Ollama receives for `inputSchema`: always `type: "object"` with `properties` (Ollama and
 * the models' templates expect both), only the keywords Ollama keeps, references resolved.
 */
export function ollamaSafeSchema(inputSchema: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const converted = convert(inputSchema, inputSchema, 0);
  const { type: _type, properties, required, ...rest } = converted;
  return {
    type: 'object',
    ...rest,
    properties: isRecord(properties) ? properties : {},
    ...(Array.isArray(required) && required.length > 0 ? { required } : {}),
  };
}
