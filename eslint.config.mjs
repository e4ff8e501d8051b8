// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'bin/**', 'test/mocha-reporter.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    rules: {
      // Row values from two drivers and test bodies are untyped by nature; `any` stays a visible choice.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Plugin packages load their own package.json with require, as Node resolves it at run time.
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    // Node scripts and configs in JavaScript (.dependency-cruiser.cjs, tools/): Node's globals.
    files: ['**/*.cjs', '**/*.mjs'],
    languageOptions: { globals: { console: 'readonly', module: 'writable', process: 'readonly', require: 'readonly' } },
  },
  {
    // chai's property assertions (`.to.be.true`, `.and.not.empty`) are expressions by design.
    files: ['**/test/**/*.ts', '**/tests/**/*.ts', 'providers/kit/src/contract.ts'],
    rules: { '@typescript-eslint/no-unused-expressions': 'off' },
  },
);
