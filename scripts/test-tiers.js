// @ts-check
/**
 * The unit tier by name (issue 36): `npm run test:unit` runs every `*.unit.test.ts`, and this
 * check (run by `scripts/check-imports.js`, so by `npm run lint`) keeps the name honest both ways.
 *
 * The rule — what separates the tiers — is what a test file *reaches* through the names it
 * imports: the built CLI, a database, a browser. A test reaches one when a name it uses leads,
 * through the declarations of the test helpers and of src/ that use it, to
 *   - the built CLI: its entry's name, `'main.cjs'` or `'…/dist/cli…'`, in a file under test/
 *     (`CLI_PATH` in test/support/cli.ts, a test that runs the bundle itself);
 *   - a database or a browser: a value import of, or a call naming, one of `HEAVY_PACKAGES`
 *     (`openStore`'s `import('postgres')`, the PGlite worker's `resolve('@electric-sql/pglite')`,
 *     pg-boss, playwright).
 * Names only, not modules: `REPO_ROOT` from test/support/cli.ts, `isNaviDataDir` from
 * src/store/open.ts and `until` from test/scenario/helpers.ts are pure and stay so, while
 * `runNavi`, `openStore` and `scenario` do not. Type-only imports never count (they are erased).
 *
 * Then: a `*.unit.test.ts` that reaches one is a problem (it would make the fast tier slow or
 * need a build); a `*.test.ts` that reaches none looks pure and is a problem too, so a new pure
 * file cannot slip out of the tier the way seventeen did from the hand-kept list. What a test
 * starts by itself (a fake Ollama or receiver on 127.0.0.1, git, a child Node, bubblewrap) is
 * allowed: the unit tier has no database and no build, not no processes.
 *
 * Approximate by design: a reference is an identifier with the same name as a top-level binding
 * (shadowing is ignored, which can only make more things heavy), and a class is heavy as a whole.
 */
import path from 'node:path';
import ts from 'typescript';

/** Packages whose use means a database or a browser, and what to call it in a message. */
const HEAVY_PACKAGES = /** @type {const} */ ({
  '@electric-sql/pglite': 'a database (PGlite)',
  postgres: 'a database (PostgreSQL)',
  'pg-boss': 'a database (pg-boss)',
  playwright: 'a browser (Chromium)',
  'playwright-core': 'a browser (Chromium)',
});

/** The built CLI's entry, named in a test (`path.join(REPO_ROOT, 'dist', 'cli', 'main.cjs')`, `'dist/cli/main.cjs'`). */
const BUILT_CLI = /(^|\/)(main\.cjs$|dist\/cli\b)/;

/** Over-estimates, on a file's text, of a heavy package's name and of `BUILT_CLI` (see `mayReach`). */
const HEAVY_TEXT = new RegExp(`['"\`](${Object.keys(HEAVY_PACKAGES).join('|')})['"\`/]`);
const BUILT_CLI_TEXT = /main\.cjs|dist\/cli/;
/**
 * A relative module named by `from '…'`, `import '…'`, `import('…')` or `require('…')`: every
 * import a file has, and maybe a few words of a comment (an over-estimate, so fine). A regular
 * expression, not `ts.preProcessFile`, which takes as long as a full parse.
 */
const RELATIVE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"`](\.\.?\/[^'"`]+)['"`]/g;
/** The text before an import's module name, when the statement is `import type …` or `export type …`. */
const TYPE_ONLY_BEFORE = /\b(?:import|export)\s+type\b(?:(?!\b(?:import|export)\b)[^;])*$/;

/** @param {string} spec @returns {string | undefined} what the package means, when it is heavy */
function heavyPackage(spec) {
  const parts = spec.split('/');
  const name = spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? '');
  return Object.hasOwn(HEAVY_PACKAGES, name) ? HEAVY_PACKAGES[/** @type {keyof typeof HEAVY_PACKAGES} */ (name)] : undefined;
}

/** A test file's tier by its name. @param {string} file */
export function isUnitName(file) {
  return /\.unit\.test\.[cm]?ts$/.test(file);
}

/**
 * @typedef {{ spec: string, name: string }} Binding an imported value: module and its export (`*`: all, `default`)
 * @typedef {{
 *   file: string,
 *   imports: Map<string, Binding>,
 *   decls: Map<string, ts.Node[]>,
 *   exports: Map<string, { local: string } | Binding>,
 *   starExports: string[],
 *   topLevel: ts.Node[],
 * }} ModuleFacts
 * @typedef {{ hops: string[], root: string }} Reach how a name leads to something heavy: the names on the way, and what
 */

/** @param {ts.Node} node @returns {boolean} */
const isExported = (node) => ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);

/** The top-level facts of one file: value imports, declarations, exports, the rest. @param {string} file @param {string} text @returns {ModuleFacts} */
function factsOf(file, text) {
  const kind = /\.c?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  // JSDoc unparsed: a third of the parse, and no comment is a use.
  const source = ts.createSourceFile(file, text, { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone }, true, kind);
  /** @type {ModuleFacts} */
  const facts = { file, imports: new Map(), decls: new Map(), exports: new Map(), starExports: [], topLevel: [] };
  /** @param {string} name @param {ts.Node} node */
  const declare = (name, node) => facts.decls.set(name, [...(facts.decls.get(name) ?? []), node]);
  for (const st of source.statements) {
    if (ts.isImportDeclaration(st) && ts.isStringLiteral(st.moduleSpecifier)) {
      const spec = st.moduleSpecifier.text;
      const clause = st.importClause;
      if (!clause) facts.topLevel.push(st); // `import 'x'`: runs x
      else if (!clause.isTypeOnly) {
        if (clause.name) facts.imports.set(clause.name.text, { spec, name: 'default' });
        const named = clause.namedBindings;
        if (named && ts.isNamespaceImport(named)) facts.imports.set(named.name.text, { spec, name: '*' });
        else if (named) for (const el of named.elements) if (!el.isTypeOnly) facts.imports.set(el.name.text, { spec, name: (el.propertyName ?? el.name).text });
      }
    } else if (ts.isExportDeclaration(st)) {
      if (st.isTypeOnly) continue;
      const spec = st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier) ? st.moduleSpecifier.text : undefined;
      if (!st.exportClause) {
        if (spec) facts.starExports.push(spec);
      } else if (ts.isNamedExports(st.exportClause)) {
        for (const el of st.exportClause.elements) {
          if (el.isTypeOnly) continue;
          const inner = (el.propertyName ?? el.name).text;
          facts.exports.set(el.name.text, spec ? { spec, name: inner } : { local: inner });
        }
      }
    } else if (ts.isFunctionDeclaration(st) || ts.isClassDeclaration(st) || ts.isEnumDeclaration(st)) {
      const name = st.name?.text ?? 'default';
      declare(name, st);
      const isDefault = (ts.getModifiers(st) ?? []).some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
      if (isExported(st)) facts.exports.set(isDefault ? 'default' : name, { local: name });
    } else if (ts.isVariableStatement(st)) {
      for (const d of st.declarationList.declarations) {
        const names = ts.isIdentifier(d.name) ? [d.name.text] : bindingNames(d.name);
        for (const name of names) {
          declare(name, d);
          if (isExported(st)) facts.exports.set(name, { local: name });
        }
      }
    } else if (ts.isExportAssignment(st)) {
      declare('default', st.expression);
      facts.exports.set('default', { local: 'default' });
    } else if (!ts.isInterfaceDeclaration(st) && !ts.isTypeAliasDeclaration(st) && !ts.isModuleDeclaration(st)) {
      facts.topLevel.push(st);
    }
  }
  return facts;
}

/** @param {ts.BindingName} name @returns {string[]} */
function bindingNames(name) {
  if (ts.isIdentifier(name)) return [name.text];
  return name.elements.flatMap((el) => (ts.isOmittedExpression(el) ? [] : bindingNames(el.name)));
}

/** An identifier in a position that names a property, not a binding. @param {ts.Identifier} id */
function isPropertyName(id) {
  const p = id.parent;
  if (ts.isPropertyAccessExpression(p)) return p.name === id;
  if (ts.isQualifiedName(p)) return p.right === id;
  if (ts.isPropertyAssignment(p) || ts.isMethodDeclaration(p) || ts.isPropertyDeclaration(p) || ts.isGetAccessor(p) || ts.isSetAccessor(p) || ts.isEnumMember(p)) return p.name === id;
  if (ts.isBindingElement(p)) return p.propertyName === id;
  return false;
}

/**
 * The names `import('spec')` takes, when its result is destructured at once
 * (`const { a, b: c } = await import('x')`); undefined: the whole module.
 * @param {ts.CallExpression} call @returns {string[] | undefined}
 */
function dynamicNames(call) {
  const awaited = ts.isAwaitExpression(call.parent) ? call.parent : call;
  const decl = awaited.parent;
  if (!ts.isVariableDeclaration(decl) || !ts.isObjectBindingPattern(decl.name)) return undefined;
  return decl.name.elements.map((el) => (el.propertyName && ts.isIdentifier(el.propertyName) ? el.propertyName.text : bindingNames(el.name)[0] ?? ''));
}

/** A memo entry being computed. */
const IN_PROGRESS = Symbol('in progress');

/**
 * Which test files reach the built CLI, a database or a browser. `read` gives a repo-relative
 * file's text (undefined: no such file), so the rule is a pure function of the sources.
 * @param {(file: string) => string | undefined} read
 */
export function createTierAnalysis(read) {
  /** @type {Map<string, string | null>} */ const texts = new Map();
  /** @type {Map<string, ModuleFacts>} */ const modules = new Map();
  /** @type {Map<string, Reach | null | typeof IN_PROGRESS>} */ const memo = new Map();
  /** @type {Map<string, boolean>} */ const possible = new Map();

  /** @param {string} file */
  function textOf(file) {
    if (!texts.has(file)) texts.set(file, read(file) ?? null);
    return texts.get(file) ?? undefined;
  }

  /** @param {string} file */
  function facts(file) {
    const text = textOf(file);
    if (text === undefined) return undefined;
    if (!modules.has(file)) modules.set(file, factsOf(file, text));
    return modules.get(file);
  }

  /** A relative specifier to a repo file, the way TypeScript's `.js` suffixes resolve. @param {string} from @param {string} spec */
  function resolve(from, spec) {
    const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
    const stem = base.replace(/\.[cm]?js$/, '');
    return [base, `${stem}.ts`, `${stem}.cts`, `${stem}.mts`, `${stem}/index.ts`].find((c) => textOf(c) !== undefined);
  }

  /**
   * Whether a file could reach anything heavy at all: its text names a heavy package or the built
   * CLI, or a file it imports (type-only imports aside) could. A cheap over-estimate, so that
   * only those files are parsed (most of src/ cannot, and parsing is most of the cost).
   * @param {string} file @returns {boolean}
   */
  function mayReach(file) {
    const known = possible.get(file);
    if (known !== undefined) return known;
    /** @type {Map<string, { root: boolean, deps: string[] }>} */ const graph = new Map();
    for (const stack = [file]; stack.length > 0; ) {
      const f = stack.pop() ?? file;
      if (graph.has(f) || possible.has(f)) continue;
      const text = textOf(f) ?? '';
      const deps = [...text.matchAll(RELATIVE_IMPORT)]
        .filter((m) => !TYPE_ONLY_BEFORE.test(text.slice(Math.max(0, m.index - 2000), m.index)))
        .flatMap((m) => resolve(f, m[1] ?? '') ?? []);
      graph.set(f, { root: HEAVY_TEXT.test(text) || (f.startsWith('test/') && BUILT_CLI_TEXT.test(text)), deps });
      stack.push(...deps);
    }
    const heavy = new Set([...graph].filter(([, v]) => v.root).map(([f]) => f));
    for (let grew = true; grew; ) {
      grew = false;
      for (const [f, v] of graph) {
        if (!heavy.has(f) && v.deps.some((d) => heavy.has(d) || possible.get(d) === true)) grew = heavy.add(f) !== undefined;
      }
    }
    for (const f of graph.keys()) possible.set(f, heavy.has(f));
    return possible.get(file) ?? false;
  }

  /** Set when a computation met one still in progress (a cycle): its "nothing" is then not final. */
  let metCycle = false;
  /** @param {string} key @param {() => Reach | undefined} compute */
  function memoised(key, compute) {
    if (memo.has(key)) {
      const known = memo.get(key);
      if (known !== IN_PROGRESS) return known ?? undefined;
      metCycle = true;
      return undefined;
    }
    const outer = metCycle;
    metCycle = false;
    memo.set(key, IN_PROGRESS);
    const reach = compute();
    if (reach || !metCycle) memo.set(key, reach ?? null);
    else memo.delete(key); // asked again later, when the cycle is no longer open
    metCycle ||= outer;
    return reach;
  }

  /** Where an imported value leads. @param {string} from @param {Binding} b @returns {Reach | undefined} */
  function bindingReach(from, b) {
    const pkg = heavyPackage(b.spec);
    if (pkg) return { hops: [], root: `${pkg}: imports ${b.spec} (${from})` };
    if (!b.spec.startsWith('.')) return undefined;
    const target = resolve(from, b.spec);
    if (target === undefined || !mayReach(target)) return undefined;
    const reach = b.name === '*' ? moduleReach(target) : exportReach(target, b.name);
    return reach && { hops: [`${b.name === '*' ? '* as' : b.name} (${target})`, ...reach.hops], root: reach.root };
  }

  /** Where an exported name leads. @param {string} file @param {string} name @returns {Reach | undefined} */
  function exportReach(file, name) {
    return memoised(`export ${file} ${name}`, () => {
      const f = facts(file);
      if (!f) return undefined;
      const onLoad = loadReach(file);
      if (onLoad) return onLoad;
      const e = f.exports.get(name);
      if (e && 'local' in e) return localReach(f, e.local);
      if (e) return bindingReach(file, e);
      for (const spec of f.starExports) {
        const reach = bindingReach(file, { spec, name });
        if (reach) return reach;
      }
      return undefined;
    });
  }

  /** A top-level name of a file: a declaration or an import. @param {ModuleFacts} f @param {string} name */
  function localReach(f, name) {
    const imported = f.imports.get(name);
    if (imported) return bindingReach(f.file, imported);
    return memoised(`decl ${f.file} ${name}`, () => {
      for (const node of f.decls.get(name) ?? []) {
        const reach = nodeReach(f, node);
        if (reach) return reach;
      }
      return undefined;
    });
  }

  /** What loading the file runs: its top-level statements. @param {string} file */
  function loadReach(file) {
    return memoised(`load ${file}`, () => {
      const f = facts(file);
      if (!f) return undefined;
      for (const node of f.topLevel) {
        const reach = ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) ? bindingReach(file, { spec: node.moduleSpecifier.text, name: '*' }) : nodeReach(f, node);
        if (reach) return reach;
      }
      return undefined;
    });
  }

  /** Any part of a module (`import * as`, an `import()` not destructured). @param {string} file */
  function moduleReach(file) {
    return memoised(`module ${file}`, () => {
      const f = facts(file);
      if (!f) return undefined;
      for (const name of [...f.decls.keys(), ...f.imports.keys()]) {
        const reach = localReach(f, name);
        if (reach) return reach;
      }
      return loadReach(file);
    });
  }

  /** The first heavy thing a subtree refers to (type positions skipped). @param {ModuleFacts} f @param {ts.Node} node @returns {Reach | undefined} */
  function nodeReach(f, node) {
    /** @type {Reach | undefined} */ let found;
    /** @param {ts.Node} n */
    const visit = (n) => {
      if (found || ts.isTypeNode(n) || ts.isInterfaceDeclaration(n) || ts.isTypeAliasDeclaration(n)) return;
      if (ts.isIdentifier(n) && !isPropertyName(n) && (f.decls.has(n.text) || f.imports.has(n.text)) && !isOwnName(n)) {
        const reach = localReach(f, n.text);
        // An import's hop already names it and its file.
        if (reach) found = f.imports.has(n.text) ? reach : { hops: [n.text, ...reach.hops], root: reach.root };
      } else if (ts.isStringLiteralLike(n)) {
        if (f.file.startsWith('test/') && BUILT_CLI.test(n.text)) found = { hops: [], root: `the built CLI: '${n.text}' (${f.file})` };
        else if (ts.isCallExpression(n.parent) && n.parent.arguments[0] === n) {
          const pkg = heavyPackage(n.text);
          if (pkg && n.parent.expression.kind !== ts.SyntaxKind.ImportKeyword) found = { hops: [], root: `${pkg}: names '${n.text}' (${f.file})` };
        }
      }
      if (!found && ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const spec = n.arguments[0];
        if (spec && ts.isStringLiteralLike(spec)) {
          const names = dynamicNames(n) ?? ['*'];
          for (const name of names) found ??= bindingReach(f.file, { spec: spec.text, name });
        }
      }
      if (!found) ts.forEachChild(n, visit);
    };
    visit(node);
    return found;
  }

  /** The name a declaration declares is not a use of it. @param {ts.Identifier} id */
  function isOwnName(id) {
    const p = id.parent;
    return (ts.isFunctionDeclaration(p) || ts.isClassDeclaration(p) || ts.isVariableDeclaration(p) || ts.isEnumDeclaration(p)) && p.name === id;
  }

  return {
    /** How a test file reaches the built CLI, a database or a browser; undefined: it reaches none. @param {string} file */
    reach: (file) => (mayReach(file) ? (loadReach(file) ?? moduleReach(file)) : undefined),
  };
}

/** @param {Reach} r */
function describeReach(r) {
  return r.hops.length > 0 ? `${r.hops.join(' → ')} → ${r.root}` : r.root;
}

/**
 * The problems with test files' names (paths repo-relative, `*.test.ts` only).
 * @param {readonly string[]} testFiles @param {(file: string) => string | undefined} read @returns {string[]}
 */
export function tierProblems(testFiles, read) {
  const analysis = createTierAnalysis(read);
  /** @type {string[]} */ const problems = [];
  for (const file of testFiles) {
    const reach = analysis.reach(file);
    if (isUnitName(file) && reach) {
      problems.push(`${file}: a *.unit.test.ts must reach no built CLI, database or browser, but it uses ${describeReach(reach)} (rename it *.test.ts, or pass a fake in; scripts/test-tiers.js)`);
    } else if (!isUnitName(file) && !reach) {
      problems.push(`${file}: looks pure (reaches no built CLI, database or browser): name it ${file.replace(/\.test\.([cm]?ts)$/, '.unit.test.$1')} so npm run test:unit runs it (scripts/test-tiers.js)`);
    }
  }
  return problems;
}
