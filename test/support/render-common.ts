/**
 * What every renderer of the fake shares: a `/api/chat` body bound as Ollama binds it, the shape
 * of a render (text plus where each request message starts), and Go's JSON of the bound values.
 */
import { goJson } from './fake-ollama-script.js';

/** One message after JSON binding (api/types.go Message; Message.UnmarshalJSON lower-cases the role). */
export interface BoundMessage {
  role: string;
  content: string;
  thinking: string;
  toolCalls: Array<{ name: string; arguments: unknown }>;
}

/** A rendered prompt. */
export interface Rendered {
  text: string;
  /** The block before the first message (system text and tools; '' when there is none). */
  header: string;
  /**
   * For each message of the request, the offset in `text` where its output starts (a message
   * merged into the one before it, or printed elsewhere, starts where that output starts).
   */
  starts: number[];
}

/** A renderer: the prompt Ollama would build from the request's messages, tools and think. */
export type RenderFn = (messages: BoundMessage[], tools: unknown[], think: ThinkSetting) => Rendered;

/** api.ThinkValue after server/routes.go ChatHandler has defaulted it. */
export interface ThinkSetting {
  /** ThinkValue.Bool(). */
  on: boolean;
  /** ThinkValue.String(): "" when off, "medium" for true, else the level. */
  level: string;
}

/**
 * `think` as the renderer receives it: server/routes.go 2616-2620 sets it to true when absent
 * on a thinking-capable model (every model the render checks model is one); api/types.go
 * ThinkValue.Bool (1166-1180) and String (1183-1199).
 */
export function thinkSetting(think: unknown): ThinkSetting {
  if (think === undefined || think === null || think === true) return { on: true, level: 'medium' };
  if (typeof think === 'string' && ['high', 'medium', 'low', 'max'].includes(think)) return { on: true, level: think };
  return { on: false, level: '' };
}

export function bindMessages(raw: unknown): BoundMessage[] {
  if (!Array.isArray(raw)) return [];
  return (raw as unknown[]).map((item) => {
    const m = isRecord(item) ? item : {};
    const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as unknown[]) : [];
    return {
      role: typeof m.role === 'string' ? m.role.toLowerCase() : '',
      content: typeof m.content === 'string' ? m.content : '',
      thinking: typeof m.thinking === 'string' ? m.thinking : '',
      toolCalls: calls.map((c) => {
        const fn = isRecord(c) && isRecord(c.function) ? c.function : {};
        return { name: typeof fn.name === 'string' ? fn.name : '', arguments: fn.arguments };
      }),
    };
  });
}

export function bindTools(raw: unknown): unknown[] {
  return Array.isArray(raw) ? (raw as unknown[]) : [];
}

/**
 * `json.Marshal` of a bound api.Tool (api/types.go 305-309 Tool, 473-490 ToolFunction and
 * ToolFunctionParameters): struct fields in declaration order, unknown fields dropped,
 * `description` omitted when empty, `properties` an insertion-ordered map (ToolPropertiesMap,
 * 353-416; null when absent), `items` and `$defs` decoded into `any` (Go maps: sorted keys).
 */
export function goTool(tool: unknown): Record<string, unknown> {
  const t = isRecord(tool) ? tool : {};
  const fn = isRecord(t.function) ? t.function : {};
  const params = isRecord(fn.parameters) ? fn.parameters : {};
  const props = isRecord(params.properties) ? params.properties : undefined;
  return {
    type: typeof t.type === 'string' ? t.type : '',
    ...(t.items !== undefined && t.items !== null ? { items: sortKeys(t.items) } : {}),
    function: {
      name: typeof fn.name === 'string' ? fn.name : '',
      ...(typeof fn.description === 'string' && fn.description !== '' ? { description: fn.description } : {}),
      parameters: {
        type: typeof params.type === 'string' ? params.type : '',
        ...(params.$defs !== undefined && params.$defs !== null ? { $defs: sortKeys(params.$defs) } : {}),
        ...(params.items !== undefined && params.items !== null ? { items: sortKeys(params.items) } : {}),
        ...(Array.isArray(params.required) && params.required.length > 0 ? { required: params.required } : {}),
        properties: props === undefined ? null : Object.fromEntries(Object.keys(props).map((k) => [k, goProperty(props[k])])),
      },
    },
  };
}

/** api/types.go ToolProperty (418-426) field order; `type` as PropertyType.MarshalJSON writes it. */
export function goProperty(raw: unknown): Record<string, unknown> {
  const p = isRecord(raw) ? raw : {};
  const types = typeof p.type === 'string' ? [p.type] : Array.isArray(p.type) ? (p.type as unknown[]) : [];
  const out: Record<string, unknown> = {};
  if (Array.isArray(p.anyOf) && p.anyOf.length > 0) out.anyOf = (p.anyOf as unknown[]).map(goProperty);
  if (types.length > 0) out.type = types.length === 1 ? types[0] : types;
  if (p.items !== undefined && p.items !== null) out.items = sortKeys(p.items);
  if (typeof p.description === 'string' && p.description !== '') out.description = p.description;
  if (Array.isArray(p.enum) && p.enum.length > 0) out.enum = sortKeys(p.enum);
  // Nested properties are an insertion-ordered map (api/types.go ToolPropertiesMap).
  if (isRecord(p.properties)) {
    const nested = p.properties;
    out.properties = Object.fromEntries(Object.keys(nested).map((k) => [k, goProperty(nested[k])]));
  }
  if (Array.isArray(p.required) && p.required.length > 0) out.required = p.required;
  return out;
}

/**
 * The top-level entries of a call's arguments in the order they were sent: api/types.go
 * ToolCallFunctionArguments (233-303) is an insertion-ordered map; the values inside it are
 * decoded into `any` (Go maps, sorted keys when marshalled).
 */
export function orderedArguments(args: unknown): Array<[string, unknown]> {
  return isRecord(args) ? Object.keys(args).map((k) => [k, sortKeys(args[k])]) : [];
}

/** A value decoded into Go's `any`: objects become maps, which marshal with sorted keys. */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isRecord(value)) return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys(value[k])]));
}

/** Go's `fmt.Sprintf("%v", v)` for the scalars JSON decodes into `any`. */
export function goScalar(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (typeof value === 'number') {
    // %v of a float64 is %g: exponent form from 1e21 up and below 1e-4.
    const abs = Math.abs(value);
    if (abs !== 0 && (abs >= 1e21 || abs < 1e-4)) return value.toExponential().replace(/e([+-])(\d)$/u, 'e$10$2');
    return String(value);
  }
  return typeof value === 'boolean' || typeof value === 'string' ? String(value) : goJson(value);
}

export { goJson };

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
