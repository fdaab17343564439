/**
 * `.ci/run` runs the suite on four Node lines, one after the other, and the
 * whole run must stay under 30 minutes. A few checks give the same answer on
 * every line: tsc over the docs' code and a user's project, vitest's type
 * tests (which `npm run check` type-checks too), and the benchmark harness's
 * smoke run. CI runs those on one line only, the one it
 * names in TOOLPOOL_CI_LINE_INDEPENDENT (a Node major, its newest line);
 * `npm test` anywhere else runs them on whatever line it is.
 */
const chosen = process.env.TOOLPOOL_CI_LINE_INDEPENDENT;

/** Whether this run is the one that does the line-independent checks. */
export const lineIndependentChecksRunHere = !chosen || process.versions.node.split('.')[0] === chosen;
