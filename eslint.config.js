// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // demo/project/ is the demo's fixture project (plain scripts the demo model reads and runs), not navi's code.
  { ignores: ['dist/', 'node_modules/', 'drizzle/', 'coverage/', 'demo/project/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: './tsconfig.check.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The live page of `navi serve`: plain browser modules served as they are (no bundling).
    files: ['src/serve/page/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(
        ['document', 'window', 'location', 'fetch', 'WebSocket', 'sessionStorage', 'history', 'requestAnimationFrame', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout', 'Node', 'URL', 'FormData', 'console'].map((name) => [name, 'readonly']),
      ),
    },
  },
  {
    // The CommonJS entry point (fast --version) imports with require by necessity.
    files: ['**/*.cts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The PGlite worker thread's code: CommonJS run unbuilt, type-checked through its JSDoc
    // (tsconfig.check.json), so it keeps the type-checked rules; tsc checks its names (no-undef).
    files: ['src/**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off', 'no-undef': 'off' },
  },
);
