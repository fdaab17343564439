/**
 * The static type of a TypeBox 1.x schema (the `typebox` package).
 *
 * Written by hand and copied into dist/ as it is (see the build script):
 * `typebox` is an optional peer dependency, and the comment on the import
 * keeps a project that does not have it compiling, also with
 * `skipLibCheck: false`. Without `typebox` the type is never reached: only
 * a TypeBox 1.x schema leads here. tsc would drop that comment from a
 * declaration it generates, hence a file of its own.
 */
// @ts-ignore -- resolves only where the optional peer `typebox` is installed, which is where it is used
import type { Static } from 'typebox';

export type TypeBoxStatic<T extends object> = Static<T>;
