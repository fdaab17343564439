/**
 * The sandbox's seccomp filter, as the classic BPF program bwrap's
 * `--seccomp FD` loads: the kernel's keyrings are out of reach. A process
 * keeps the session keyring of whoever started it (a host started under
 * `pam_keyinit` or a container runtime has one with its secrets in it), and
 * a user keyring is shared by every process of a uid; no namespace bwrap
 * can make separates them. So `keyctl`, `add_key` and `request_key` fail
 * with EPERM (as under Docker's default profile), and a system call of
 * another ABI (i386 or x32 on x86-64, arm32 on arm64), whose numbers
 * differ, kills the process: Node never makes one.
 */

/** seccomp_data: the system call's number at offset 0, its architecture at 4. */
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;
const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_RET_K = 0x06;
const RET_ALLOW = 0x7fff_0000;
const RET_ERRNO_EPERM = 0x0005_0000 | 1;
const RET_KILL_PROCESS = 0x8000_0000;
/** x32 system calls on x86-64 carry this bit. */
const X32_BIT = 0x4000_0000;

interface Abi {
  audit: number;
  /** keyctl, add_key, request_key. */
  denied: number[];
  /** Numbers from here up belong to another ABI sharing the audit arch (x32). */
  foreignFrom?: number;
}

const ABIS: Partial<Record<NodeJS.Architecture, Abi>> = {
  x64: { audit: 0xc000_003e, denied: [250, 248, 249], foreignFrom: X32_BIT },
  arm64: { audit: 0xc000_00b7, denied: [219, 217, 218] },
};

type Instruction = [code: number, jt: number, jf: number, k: number];

/** The filter for this machine's architecture, or undefined where toolpool has none (the sandbox then runs without one). */
export function seccompProgram(arch: NodeJS.Architecture = process.arch): Buffer | undefined {
  const abi = ABIS[arch];
  if (!abi) return undefined;
  // Jumps are relative to the next instruction; the last three are: allow, deny, kill.
  const body: Instruction[] = [];
  const checks = abi.denied.length + (abi.foreignFrom !== undefined ? 1 : 0);
  // From instruction i (0-based in `body` after the loads), allow is at checks - i - 1 ahead, deny at checks - i, kill at checks - i + 1.
  const toEnd = (i: number, target: 0 | 1 | 2) => checks - i - 1 + target;
  const program: Instruction[] = [
    [BPF_LD_W_ABS, 0, 0, ARCH_OFFSET],
    // Not this ABI: jump past the number load and every check, to kill.
    [BPF_JEQ_K, 0, checks + 3, abi.audit],
    [BPF_LD_W_ABS, 0, 0, NR_OFFSET],
  ];
  let i = 0;
  if (abi.foreignFrom !== undefined) body.push([BPF_JGE_K, toEnd(i++, 2), 0, abi.foreignFrom]);
  for (const nr of abi.denied) body.push([BPF_JEQ_K, toEnd(i++, 1), 0, nr]);
  program.push(
    ...body,
    [BPF_RET_K, 0, 0, RET_ALLOW],
    [BPF_RET_K, 0, 0, RET_ERRNO_EPERM],
    [BPF_RET_K, 0, 0, RET_KILL_PROCESS],
  );
  const buffer = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], n) => {
    buffer.writeUInt16LE(code, n * 8);
    buffer.writeUInt8(jt, n * 8 + 2);
    buffer.writeUInt8(jf, n * 8 + 3);
    buffer.writeUInt32LE(k >>> 0, n * 8 + 4);
  });
  return buffer;
}
