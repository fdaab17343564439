// Child process for case 18, run by plain `node` (no tsx: what an installed
// user's app pays), copied into the cold project (bench/lib/cold-project.ts)
// with the raw worker, so `import('toolpool')` is the project's dependency. Times, from this script's first line, what it takes to
// be ready: the pool started (importing piscina or toolpool included) and a
// first result back from every worker or module, then how long close()
// takes. Prints one JSON line.
const start = performance.now();
const { variant, tsTools, jsTools } = JSON.parse(process.argv[2]);
const rawWorker = new URL('./cold-raw-worker.mjs', import.meta.url).href;
const names = ['echo', 'sum', 'upper'];
const argsOf = { echo: { text: 'hi' }, sum: { a: 1, b: 2 }, upper: { text: 'hi' } };

async function rawPiscina(tools) {
  const { Piscina } = await import('piscina');
  const pool = new Piscina({ filename: rawWorker, minThreads: 2, maxThreads: 2, workerData: { tools } });
  // Until both threads have answered: the first to be ready may take the first tasks.
  const seen = new Set();
  while (seen.size < 2) {
    const answers = await Promise.all(
      [0, 1].map((i) => pool.run({ name: tools.length ? names[i] : '', args: argsOf[names[i]] })),
    );
    for (const answer of answers) seen.add(answer.threadId);
  }
  return pool;
}

async function toolpool(shared) {
  const { createExecutor } = await import('toolpool');
  const tools = shared ? tsTools.map((module) => ({ module, trustDomain: 'cold' })) : tsTools;
  const executor = await createExecutor({ tools, workers: { min: 1, max: 2 } });
  const { results } = await executor.executeBatch(
    names.map((name, i) => ({ id: `c${i}`, name, arguments: argsOf[name] })),
  );
  const failed = results.find((result) => result.isError);
  if (failed) throw new Error(`cold start: a first call failed: ${JSON.stringify(failed)}`);
  return executor;
}

const running =
  variant === 'raw-trivial'
    ? await rawPiscina([])
    : variant === 'raw-tools'
      ? await rawPiscina(jsTools)
      : await toolpool(variant === 'toolpool-shared');
const ready = performance.now();
await (running.close ? running.close() : running.destroy());
const closed = performance.now();
console.log(JSON.stringify({ variant, readyMs: ready - start, closeMs: closed - ready }));
