import { describe, expect, test } from 'vitest';
import { seccompProgram } from '../../src/isolation/sandbox/seccomp.ts';

/** Runs the classic BPF program on one system call, as the kernel would (only the instructions seccomp.ts emits). */
function verdict(program: Buffer, arch: number, nr: number): number {
  const data = Buffer.alloc(16);
  data.writeInt32LE(nr, 0);
  data.writeUInt32LE(arch, 4);
  let accumulator = 0;
  for (let pc = 0; pc < program.length / 8; pc++) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) accumulator = data.readUInt32LE(k);
    else if (code === 0x15) pc += accumulator === k ? jt : jf;
    else if (code === 0x35) pc += accumulator >= k ? jt : jf;
    else if (code === 0x06) return k;
    else throw new Error(`unexpected instruction ${code}`);
  }
  throw new Error('fell off the end');
}

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const KILL = 0x80000000;

describe('the seccomp filter', () => {
  test('x86-64: keyctl, add_key and request_key fail with EPERM; everything else of the ABI runs; i386 and x32 calls kill', () => {
    const program = seccompProgram('x64')!;
    const x64 = 0xc000003e;
    for (const nr of [250, 248, 249]) expect(verdict(program, x64, nr)).toBe(EPERM);
    for (const nr of [0, 1, 57, 59, 231, 247, 251, 435]) expect(verdict(program, x64, nr)).toBe(ALLOW);
    expect(verdict(program, x64, 0x40000000 + 250)).toBe(KILL);
    expect(verdict(program, 0x40000003, 288)).toBe(KILL);
  });

  test('arm64: the same three fail with EPERM; arm32 calls kill', () => {
    const program = seccompProgram('arm64')!;
    const arm64 = 0xc00000b7;
    for (const nr of [219, 217, 218]) expect(verdict(program, arm64, nr)).toBe(EPERM);
    for (const nr of [63, 64, 220, 221]) expect(verdict(program, arm64, nr)).toBe(ALLOW);
    expect(verdict(program, 0x40000028, 311)).toBe(KILL);
  });

  test('no filter for an architecture toolpool has none for', () => {
    expect(seccompProgram('ia32')).toBeUndefined();
  });
});
