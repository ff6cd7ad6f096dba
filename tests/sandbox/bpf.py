"""A classic BPF interpreter for seccomp programs, the way the kernel runs them on one system
call (struct seccomp_data: nr, arch, ip, args), for every machine whatever this one is and for
calls this kernel does not have. Only what a seccomp program may use; anything else raises."""

from __future__ import annotations

import struct

LD, JMP, RET = 0x00, 0x05, 0x06
W, ABS, K = 0x00, 0x20, 0x00
JA, JEQ, JGT, JGE, JSET = 0x00, 0x10, 0x20, 0x30, 0x40


def seccomp_data(nr: int, arch: int, args: tuple[int, ...] = ()) -> bytes:
    """The 64 bytes the kernel hands a filter (little-endian, as on x86_64 and aarch64)."""
    padded = (*args, *(0,) * (6 - len(args)))
    return struct.pack("<iIQ6Q", nr, arch, 0, *(a & 0xFFFFFFFFFFFFFFFF for a in padded))


def run(program: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """What the program returns for this call (SECCOMP_RET_*)."""
    data = seccomp_data(nr, arch, args)
    insns = [struct.unpack_from("=HBBI", program, i) for i in range(0, len(program), 8)]
    assert 0 < len(insns) <= 4096 and len(program) % 8 == 0
    acc: int = 0
    pc = 0
    while True:
        code, jt, jf, k = insns[pc]  # an IndexError: the program ran off its end
        pc += 1
        cls = code & 0x07
        if code == LD | W | ABS:
            assert k % 4 == 0 and k + 4 <= len(data), k
            (acc,) = struct.unpack_from("<I", data, k)
        elif cls == JMP and code & 0x08 == K:
            op = code & 0xF0
            if op == JA:
                pc += k
                continue
            taken = {JEQ: acc == k, JGT: acc > k, JGE: acc >= k, JSET: bool(acc & k)}[op]
            pc += jt if taken else jf
        elif code == RET | K:
            return int(k)
        else:
            raise ValueError(f"instruction {code:#x} is not interpreted here")
