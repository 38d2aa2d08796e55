import type { HelpTable } from "./Launch.ts"

/**
 * `p2v`'s help, computed from the command definitions (Cli.ts). The bundled `p2v` has this module
 * replaced by the table computed when it was built (scripts/build-client.ts), so that its help
 * loads nothing else; test/client/package.test.ts compares the two.
 */
export const load = (): Promise<HelpTable> => import("./Cli.ts").then((cli) => cli.helpTable())
