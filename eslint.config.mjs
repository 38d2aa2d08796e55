import * as effectEslint from "@effect/eslint-plugin"
import js from "@eslint/js"
import globals from "globals"
import tseslint from "typescript-eslint"

/**
 * `npm run lint`, run by .ci/run after the type check: ESLint's and typescript-eslint's recommended
 * rules over the whole tree, as the Effect monorepo lints, and a small rule set that keeps the
 * layout's rules from sliding back.
 *
 * The formatter is the Effect monorepo's too: @effect/eslint-plugin's dprint rule, with its settings.
 * The lint enforces it; `npm run format` applies it (`eslint --fix`).
 */
const packages = "(api|client|cluster|domain|portal|renderer|server|vision)"

// everything the type check reads, and the root's config modules
const typescript = ["packages/**/*.ts", "test/**/*.ts", "bench/**/*.ts", "scripts/**/*.ts", "*.ts"]
const javascript = ["**/*.js", "**/*.mjs"]

const noSql = {
  selector: "TaggedTemplateExpression[tag.name='sql'], CallExpression[callee.object.name='sql']",
  message: "SQL lives in packages/cluster/src/repositories/: add an operation to the aggregate's repository."
}
const noAsAny = {
  selector: "TSAsExpression > TSAnyKeyword.typeAnnotation",
  message: "No `as any`: decode with a Schema, narrow with a guard (Predicate, instanceof), or type the value."
}
// packages import each other by name (@pic2video/…), never by a path into another's files
const noPathIntoAPackage = {
  regex: `^(\\.\\./)+(packages/)?${packages}/(src|test)(/|$)`,
  message: "Import another package by its name (@pic2video/…) and an export it declares."
}

export default tseslint.config(
  {
    ignores: [
      "**/node_modules/**",
      "**/dist/**",
      "data/**",
      "packages/renderer/assembly/**",
      // written by npm run vision:fit, one array a line
      "packages/vision/src/scene-model-weights.ts"
    ]
  },
  { linterOptions: { reportUnusedDisableDirectives: "error" } },
  {
    files: javascript,
    extends: [js.configs.recommended],
    languageOptions: { ecmaVersion: 2023, sourceType: "module", globals: globals.node }
  },
  {
    // the portal's page script runs in the browser
    files: ["packages/portal/static/**/*.js"],
    languageOptions: { sourceType: "script", globals: globals.browser }
  },
  {
    files: typescript,
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    languageOptions: { parser: tseslint.parser, ecmaVersion: 2023, sourceType: "module" },
    rules: {
      "no-restricted-syntax": ["error", noAsAny],
      "no-restricted-imports": ["error", { patterns: [noPathIntoAPackage] }],
      // a Schema's type as an interface of its own name: `interface Photo extends Schema.Schema.Type<typeof Photo> {}`
      "@typescript-eslint/no-empty-object-type": ["error", { allowInterfaces: "with-single-extends" }],
      // as the type check's noUnusedLocals/noUnusedParameters, with `_` for a name kept on purpose
      "@typescript-eslint/no-unused-vars": ["error", {
        argsIgnorePattern: "^_",
        varsIgnorePattern: "^_",
        caughtErrorsIgnorePattern: "^_",
        destructuredArrayIgnorePattern: "^_"
      }],
      // Effect's own spelling: Effect.gen(function*() {…})
      "generator-star-spacing": ["error", { before: false, after: false, named: { before: false, after: true } }]
    }
  },
  {
    // the only modules that hold SQL: the repositories, and the migrations and client that make the database
    files: ["packages/*/src/**/*.ts"],
    ignores: ["packages/cluster/src/repositories/**", "packages/cluster/src/database/**"],
    rules: {
      "no-restricted-syntax": ["error", noAsAny, noSql],
      "no-restricted-imports": ["error", {
        paths: [{
          name: "effect/sql",
          message: "Only repositories (packages/cluster/src/repositories/) reach the database."
        }],
        patterns: [noPathIntoAPackage]
      }]
    }
  },
  {
    // no type assertions in the service's own code; the platform seams say why at the line
    files: ["packages/api/src/**/*.ts", "packages/cluster/src/**/*.ts"],
    rules: { "@typescript-eslint/consistent-type-assertions": ["error", { assertionStyle: "never" }] }
  },
  {
    files: [...typescript, "scripts/**/*.mjs", "test/**/*.mjs", "*.mjs"],
    plugins: { "@effect": effectEslint },
    rules: {
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }]
    }
  }
)
