import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const noEnumsOrNamespaces = [
  { selector: 'TSEnumDeclaration', message: 'Use string-literal unions and as-const objects.' },
  { selector: 'TSModuleDeclaration[kind="namespace"]', message: 'No namespaces.' },
];

const helperNames = '/^(waitFor|waitUntil|sleep|eventually|until)$/';
const useTestTools = 'Test helpers live in @kinformer/test-tools (waitFor, settle, within): no local copy.';
const noSleep =
  'No real sleeps over 5 ms in tests: use FakeClock, or waitFor/settle from @kinformer/test-tools.';
/** Local wait/sleep helpers and `new Promise(r => setTimeout(r, >5))` sleeps, in tests. */
const noLocalTestHelpers = [
  { selector: `FunctionDeclaration[id.name=${helperNames}]`, message: useTestTools },
  { selector: `VariableDeclarator[id.name=${helperNames}][init.type=/Function/]`, message: useTestTools },
  {
    selector:
      "NewExpression[callee.name='Promise'] CallExpression[callee.name='setTimeout'][arguments.length=2][arguments.1.type='Literal'][arguments.1.value>5]",
    message: noSleep,
  },
  {
    selector:
      "NewExpression[callee.name='Promise'] CallExpression[callee.property.name='setTimeout'][arguments.length=2][arguments.1.type='Literal'][arguments.1.value>5]",
    message: noSleep,
  },
];
const sleepModules = ['node:timers/promises', 'timers/promises'].map((name) => ({
  name,
  importNames: ['setTimeout'],
  message: noSleep,
}));

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'docs/api/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': ['error', ...noEnumsOrNamespaces],
    },
  },
  {
    // Tests take their helpers from @kinformer/test-tools and never sleep (STYLE.md, Tests).
    files: ['**/*.test.ts', '**/*.test.helpers.ts', '**/test/**/*.ts'],
    ignores: ['packages/test-tools/**', 'packages/core/src/waitFor.ts'],
    rules: {
      'no-restricted-syntax': ['error', ...noEnumsOrNamespaces, ...noLocalTestHelpers],
      'no-restricted-imports': [
        'error',
        {
          paths: sleepModules,
          patterns: [{ group: ['**/node_modules/**'], message: 'Import packages by name.' }],
        },
      ],
    },
  },
  {
    files: ['**/*.test.ts', '**/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
