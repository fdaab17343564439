import { SandboxErrors } from '../../core/errors.ts';
import { ToolpoolError } from '../../core/error-codes.ts';

/** sun_path holds 108 bytes on Linux, its last a NUL. */
const MAX_SOCKET_PATH_BYTES = 107;

/**
 * Refuses a Unix socket path the kernel cannot hold, before a listen: Node
 * 20 listens at the path cut short, which lies outside the private 0700
 * folder the socket was made in (another user of the host could connect to
 * it first) and outside what the sandbox binds (the network proxy's socket
 * never arrives there), and the socket file stays behind. The sandbox's
 * sockets live in the temporary folder, so a deep TMPDIR makes them too long.
 */
export function checkSocketPath(path: string): void {
  const bytes = Buffer.byteLength(path);
  if (bytes > MAX_SOCKET_PATH_BYTES)
    throw new ToolpoolError('TOOLPOOL_ERR_SANDBOX_UNAVAILABLE', SandboxErrors.socketPathTooLong(path, bytes));
}
