/**
 * The README's "Using MCP servers" example, type-checked with the rest and
 * run by test/readme-examples.test.ts (with the test MCP servers in place of
 * the ones named here). Not part of the build.
 */
import { createExecutor, type Executor } from '../index.ts';

/** Where the example's servers are: a stdio server installed with npm, and an HTTP one. */
export interface ExampleServers {
  /** The server's entry script, installed beforehand (`npm install some-mcp-server`). */
  notesServer: string;
  /** Its own files: its folder and the node_modules it imports from. */
  notesFiles: string[];
  searchUrl: string;
}

export async function mcpServersExample({ notesServer, notesFiles, searchUrl }: ExampleServers): Promise<Executor> {
  // #region mcp-servers
  const executor = await createExecutor({
    mcpServers: {
      // Started by toolpool in a sandbox that shows it node, its libraries and what permissions list.
      notes: {
        command: 'node',
        args: [notesServer],
        env: { NOTES_DIR: '/srv/notes' }, // its whole environment
        permissions: { fsRead: [...notesFiles, '/srv/notes'], fsWrite: ['/srv/notes/inbox'], net: [] },
        needsApproval: (tool, args) => tool === 'delete_note' || args.force === true,
      },
      // Reached over Streamable HTTP.
      search: { url: searchUrl, headers: { Authorization: `Bearer ${process.env.SEARCH_TOKEN}` }, timeoutMs: 10_000 },
    },
  });
  // Each tool is SERVER_tool: notes_read_note, ..., search_query, ...; the Agent sees list changes on its next turn.
  // #endregion
  return executor;
}
