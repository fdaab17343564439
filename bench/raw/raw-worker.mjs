// The raw piscina baseline: a worker that runs a tool module's `execute`
// with nothing of toolpool around it (no validation, no call table, no
// update channel, no payload check). A synchronous handler once the module
// is loaded, so a round trip is piscina's own cost plus the tool's work.
const tools = new Map();
const context = { callId: 'raw', signal: new AbortController().signal, onUpdate() {}, host: {} };

export default function handle({ module, args }) {
  const tool = tools.get(module);
  if (tool) return tool.execute(args, context);
  return import(module).then((namespace) => {
    tools.set(module, namespace.default);
    return namespace.default.execute(args, context);
  });
}
