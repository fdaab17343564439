/**
 * What a server sent for each `tools/call`, in the order it reached the
 * client's transport: its progress notifications and then its result.
 *
 * The MCP SDK clients (1.x and 2.x) run a notification's handler a
 * microtask late but handle a response at once, so when the last progress
 * notification and the result arrive in one read (a loaded machine, a
 * stdio pipe, one SSE chunk) the client drops that notification as
 * "unknown token" (modelcontextprotocol/typescript-sdk#2580, a race no
 * server can avoid). A test of the server reads the wire instead of the
 * client's `onprogress`.
 */
type Message = { id?: unknown; method?: string; params?: Record<string, unknown> };
type Send = (message: never, ...rest: never[]) => Promise<void>;
interface ClientTransport {
  send: Send;
  onmessage?: ((message: never, ...rest: never[]) => void) | undefined;
}

export type ProgressParams = { progress: number; total?: number; message?: string };

export interface WireProgress {
  /** The progress notifications of the last call of `tool` that were on the wire before its result; throws if no result came. */
  before(tool: string): ProgressParams[];
}

/** Records a connected client transport's traffic. Call it after `client.connect(transport)` (connect sets `onmessage`). */
export function recordWireProgress(transport: ClientTransport): WireProgress {
  const calls = new Map<string, { id: unknown; token: unknown }>();
  const received: Message[] = [];
  const send = transport.send.bind(transport) as (message: Message, ...rest: unknown[]) => Promise<void>;
  transport.send = ((message: Message, ...rest: unknown[]) => {
    if (message.method === 'tools/call') {
      const meta = message.params?._meta as { progressToken?: unknown } | undefined;
      calls.set(String(message.params?.name), { id: message.id, token: meta?.progressToken });
    }
    return send(message, ...rest);
  }) as Send;
  const deliver = transport.onmessage as ((message: Message, ...rest: unknown[]) => void) | undefined;
  if (deliver === undefined) throw new Error('recordWireProgress: connect the client first');
  transport.onmessage = ((message: Message, ...rest: unknown[]) => {
    received.push(message);
    deliver(message, ...rest);
  }) as ClientTransport['onmessage'];
  return {
    before(tool) {
      const call = calls.get(tool);
      if (call === undefined) throw new Error(`no tools/call of ${tool} was sent`);
      const end = received.findIndex((message) => message.method === undefined && message.id === call.id);
      if (end === -1) throw new Error(`no result of ${tool} arrived`);
      return received
        .slice(0, end)
        .filter(
          (message) => message.method === 'notifications/progress' && message.params?.progressToken === call.token,
        )
        .map(({ params }) => {
          const { progressToken: _token, ...rest } = params as ProgressParams & { progressToken: unknown };
          return rest;
        });
    },
  };
}
