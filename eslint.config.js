import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'openapi/**', '.tap/**', 'data/**', 'test/openapi/client/schema.d.ts'] }),
  {
    rules: {
      // TypeBox's idiom gives a schema value and its static type the same name;
      // the compiler already rejects real redeclarations.
      '@typescript-eslint/no-redeclare': 'off'
    }
  }
]
