import js from '@eslint/js'
import prettier from 'eslint-config-prettier/flat'
import { defineConfig } from 'eslint/config'
import tseslint from 'typescript-eslint'

export default defineConfig(
  {
    ignores: [
      'dist/',
      '.data/',
      '.data-*/',
      'coverage/',
      'reports/',
      'test-results/',
      'node_modules/',
      'scripts/idp-conformance.js',
      'scripts/build.js',
      'eslint.config.js',
    ],
  },
  js.configs.recommended,
  tseslint.configs.strictTypeChecked,
  prettier,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-confusing-void-expression': 'off',
    },
  },
  // Issue 20, arrows downhill only: the reference server does not depend on the suite that
  // tests it. Files under server/ may not import conformance/; the three named exceptions are
  // tests that deliberately run the suite, or share its JWT mutations (each says so at its import).
  {
    files: ['server/**/*.ts'],
    ignores: [
      'server/views/pages.setup.ts',
      'server/scale/workers.scale.test.ts',
      'server/resource-server/verifier.property.test.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/conformance/**'],
              message:
                'server/ does not import the conformance suite; test helpers belong in server/test-helpers.ts',
            },
          ],
        },
      ],
    },
  },
  // Issue 20, the suite's shape: a check file holds checks and takes its helpers from the
  // harness, never from another area's file; a sabotage file takes its shared msw helpers from
  // the kit (besides packages such as msw and jose, and its catalogue's type for the IDs).
  {
    files: ['conformance/checks/*.ts'],
    ignores: ['conformance/checks/index.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['./*'],
              message:
                'a check file does not import another check file: move the helper to conformance/harness/',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['conformance/self-test/sabotage/*.ts'],
    ignores: ['conformance/self-test/sabotage/kit.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\.?/(?!kit\\.ts$)(?!\\.\\./catalogue/[\\w-]+\\.ts$)',
              message:
                'a sabotage file imports only ./kit.ts (and its catalogue type): shared helpers belong in the kit',
            },
          ],
        },
      ],
    },
  },
)
