/**
 * JSON Schema for user tools' arguments, checked with ajv. Built-in tools declare zod schemas;
 * user tools (`./tools/*.js`) declare plain JSON Schema, which zod cannot read, so their
 * schemas are compiled here once at load and the model's arguments are checked against them.
 * ajv is imported lazily: a project without user tools never pays its ~50 ms import.
 */
import type { Ajv as AjvDraft7, ErrorObject, Options } from 'ajv';
import type { Ajv2019 as AjvDraft2019 } from 'ajv/dist/2019.js';
import type { Ajv2020 as AjvDraft2020 } from 'ajv/dist/2020.js';
import { z } from 'zod';
import { typeName } from '../util/guards.js';

/** One problem with a value, located by the path of keys down to it. */
export interface SchemaIssue {
  path: string[];
  message: string;
}

/** Checks a value against a compiled schema; an empty list means it is valid. */
export type SchemaCheck = (value: unknown) => SchemaIssue[];

/** A compiled schema, or why it could not be compiled (one line, for the user). */
export type CompiledSchema = { ok: true; check: SchemaCheck } | { ok: false; problem: string };

/** What navi needs from an ajv instance; both ajv classes it uses satisfy it. */
interface SchemaEngine {
  errors?: ErrorObject[] | null;
  validateSchema(schema: object): boolean | Promise<unknown>;
  compile(schema: object): { (data: unknown): boolean | Promise<unknown>; errors?: ErrorObject[] | null };
  removeSchema(schema: object): unknown;
}

type Dialect = 'draft-07' | '2019-09' | '2020-12';

/** `$schema` values accepted, without a trailing `#`; absent means draft-07 (what LLM tool schemas use). */
const DIALECTS: Readonly<Record<string, Dialect>> = {
  'http://json-schema.org/draft-07/schema': 'draft-07',
  'https://json-schema.org/draft-07/schema': 'draft-07',
  'https://json-schema.org/draft/2019-09/schema': '2019-09',
  'https://json-schema.org/draft/2020-12/schema': '2020-12',
};

/**
 * Strict about the schema (an unknown keyword such as a misspelt `requried` is an error rather
 * than a silently optional argument), lenient where strictness only nags (`required` naming a
 * property not listed, untyped keywords). `format` is an annotation: checking it needs
 * `ajv-formats`, a second dependency that has not earned its place. `logger: false` because
 * ajv would otherwise warn on the console, which stream-json output cannot afford.
 */
const AJV_OPTIONS: Options = {
  strict: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  allErrors: true,
  validateFormats: false,
  logger: false,
};

/** Problems listed for one schema mismatch; the registry shows only the first few anyway. */
const MAX_ISSUES = 8;

/**
 * A named export of one of ajv's CommonJS modules. Node's own `import()` finds the names
 * (cjs-module-lexer); the bundle's lazy chunk of a CommonJS module that another chunk also
 * imports (the MCP SDK imports ajv) exports only `default` (the module's `exports`), which
 * carries the same names.
 */
function namedExport<T>(mod: Record<string, unknown>, name: string): T {
  const direct = mod[name];
  if (direct !== undefined) return direct as T;
  const exported = mod.default as Record<string, unknown>;
  // ajv's `module.exports` is itself the class of its module, with the name on it as well.
  return (exported[name] ?? exported) as T;
}

async function createEngine(dialect: Dialect, options: Options): Promise<SchemaEngine> {
  switch (dialect) {
    case 'draft-07': {
      const Ajv = namedExport<typeof AjvDraft7>(await import('ajv'), 'Ajv');
      return new Ajv(options);
    }
    case '2019-09': {
      const Ajv2019 = namedExport<typeof AjvDraft2019>(await import('ajv/dist/2019.js'), 'Ajv2019');
      return new Ajv2019(options);
    }
    case '2020-12': {
      const Ajv2020 = namedExport<typeof AjvDraft2020>(await import('ajv/dist/2020.js'), 'Ajv2020');
      return new Ajv2020(options);
    }
  }
}

/** How a compiler treats schemas. */
export interface JsonSchemaCompilerOptions {
  /**
   * Default true: an unknown keyword is an error (a user's own tool). False for schemas navi
   * does not own (MCP servers): unknown keywords are annotations, only invalid schemas fail.
   */
  strict?: boolean;
}

/** The value a JSON pointer (`/a/0/b`) designates inside `root`, or undefined. */
function valueAt(root: unknown, segments: readonly string[]): unknown {
  let current = root;
  for (const segment of segments) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** One ajv error in the words the registry uses for built-ins ("text: expected string, received number"). */
function describeAjvError(error: ErrorObject, data: unknown): SchemaIssue {
  const path = pointerSegments(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { path: [...path, String(params.missingProperty)], message: 'required' };
    case 'additionalProperties':
      return { path: [...path, String(params.additionalProperty)], message: 'unexpected property' };
    case 'type': {
      const expected = String(params.type).split(',').join(' or ');
      return { path, message: `expected ${expected}, received ${typeName(valueAt(data, path))}` };
    }
    case 'enum': {
      const allowed = Array.isArray(params.allowedValues) ? params.allowedValues : [];
      return { path, message: `expected one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}` };
    }
    case 'const':
      return { path, message: `expected ${JSON.stringify(params.allowedValue)}` };
    default:
      return { path, message: error.message ?? `fails '${error.keyword}'` };
  }
}

function describeAjvErrors(errors: readonly ErrorObject[] | null | undefined, data: unknown): SchemaIssue[] {
  return (errors ?? []).slice(0, MAX_ISSUES).map((error) => describeAjvError(error, data));
}

/** `path: message`, with the path written as the user wrote the schema (`parameters.properties.a`). */
function formatIssue(prefix: string, issue: SchemaIssue): string {
  return `${[prefix, ...issue.path].join('.')}: ${issue.message}`;
}

/**
 * Compiles JSON Schemas for tool arguments. One instance per load: ajv engines are created on
 * first use per dialect (compiling the meta-schema costs ~40 ms) and shared by every schema.
 */
export class JsonSchemaCompiler {
  private readonly engines = new Map<Dialect, Promise<SchemaEngine>>();
  private readonly options: Options;

  constructor(options: JsonSchemaCompilerOptions = {}) {
    this.options = options.strict === false ? { ...AJV_OPTIONS, strict: false } : AJV_OPTIONS;
  }

  private engine(dialect: Dialect): Promise<SchemaEngine> {
    let engine = this.engines.get(dialect);
    if (!engine) {
      engine = createEngine(dialect, this.options);
      this.engines.set(dialect, engine);
    }
    return engine;
  }

  /**
   * Compiles `schema` (a JSON value: no functions, no cycles). Never throws for a bad schema:
   * the problem names the offending keyword's path under `where` (a tool's `parameters`).
   */
  async compile(schema: Readonly<Record<string, unknown>>, where = 'parameters'): Promise<CompiledSchema> {
    const declared = schema.$schema;
    let dialect: Dialect = 'draft-07';
    if (declared !== undefined) {
      const known = typeof declared === 'string' ? DIALECTS[declared.replace(/#$/, '')] : undefined;
      if (!known && this.options.strict === false) {
        // Not ours to reject: read it as the draft LLM tool schemas use.
      } else if (!known) {
        return {
          ok: false,
          problem: `${where}.$schema: unsupported ${JSON.stringify(declared)}; omit it (draft-07) or use draft 2019-09 or 2020-12`,
        };
      } else {
        dialect = known;
      }
    }
    // The dialect is chosen above, so `$schema` itself (whose exact spelling ajv is picky about) is not compiled.
    const { $schema: _omitted, ...compilable } = schema;
    const engine = await this.engine(dialect);
    if (!(await engine.validateSchema(compilable))) {
      const [first] = describeAjvErrors(engine.errors, compilable);
      return { ok: false, problem: first ? formatIssue(where, first) : `${where}: not a valid JSON Schema` };
    }
    try {
      const validate = engine.compile(compilable);
      // Forget the schema by `$id` so two tools may use the same `$id`; the compiled function stays valid.
      engine.removeSchema(compilable);
      return {
        ok: true,
        check: (value) => (validate(value) === true ? [] : describeAjvErrors(validate.errors, value)),
      };
    } catch (err) {
      // ajv's messages here are one line ("strict mode: unknown keyword: \"requried\"", "can't resolve reference …").
      const message = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
      engine.removeSchema(compilable);
      return { ok: false, problem: `${where}: ${message}` };
    }
  }
}

/**
 * A zod schema that accepts exactly what `check` accepts, so the registry's one validation path
 * (`schema.safeParse`, then its usual `invalid arguments for 'x': …` result) runs ajv for user
 * tools. The value passes through unchanged: no coercion, no defaults.
 */
export function schemaFromCheck(check: SchemaCheck): z.ZodType {
  return z.unknown().superRefine((value, ctx) => {
    for (const issue of check(value)) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message, input: value });
  });
}
