import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/.tap/**', 'data/**', '**/.turbo/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error',
        { selector: 'TSEnumDeclaration', message: 'Use an `as const` object and a union instead of enum.' },
        { selector: 'TSModuleDeclaration[kind="namespace"]', message: 'No namespaces.' },
        { selector: 'MemberExpression[object.name="process"][property.name="env"]', message: 'Only packages/config reads process.env.' }
      ]
    }
  },
  {
    // Migrations are frozen and schema-agnostic by design: Kysely<any> is their documented type.
    files: ['packages/db/src/migrations/**', 'packages/db/src/migrate.ts', 'packages/db/src/queries/health.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' }
  },
  {
    files: ['packages/config/src/**'],
    rules: { 'no-restricted-syntax': 'off' }
  },
  {
    // Child processes inherit the environment: passing it along is not reading configuration.
    files: ['packages/stack/src/**', 'packages/stack/test/**'],
    rules: { 'no-restricted-syntax': ['error', { selector: 'TSEnumDeclaration', message: 'No enums.' }] }
  },
  {
    // Repository scripts (npm test's scheduler): plain Node ESM, settings from the environment.
    files: ['scripts/**'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: { 'no-restricted-syntax': 'off' }
  }
)
