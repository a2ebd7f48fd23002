#!/usr/bin/env python3
"""Checks that packaged executables run on any x86-64 CPU: no compile command of the build tree
uses -march other than x86-64 (never -march=native), and every function of the linked binaries
that holds an instruction beyond baseline x86-64 (VEX/EVEX: AVX, AVX2, FMA, F16C, BMI; SSSE3,
SSE4, POPCNT, LZCNT) was compiled in one of the per-file AVX2 sources, which run only after the
run-time CPUID check. Weak (inline, COMDAT) symbols do not count as AVX2 code: the linker may
pick such a copy for baseline callers.
Usage: check_baseline_isa.py BUILD_DIR BINARY...   (unstripped binaries of that tree)"""
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

BEYOND_BASELINE = set("""
andn bextr blsi blsmsk blsr bzhi mulx pdep pext rorx sarx shlx shrx popcnt lzcnt
pshufb phaddw phaddd phaddsw phsubw phsubd phsubsw pmaddubsw pmulhrsw palignr psignb psignw
psignd pabsb pabsw pabsd ptest pblendw pblendvb blendps blendpd blendvps blendvpd dpps dppd
insertps extractps pextrb pextrd pextrq pinsrb pinsrd pinsrq pmaxsb pmaxsd pmaxud pmaxuw pminsb
pminsd pminud pminuw pmuldq pmulld packusdw pcmpeqq pcmpgtq roundps roundpd roundss roundsd
mpsadbw phminposuw movntdqa crc32 pcmpestri pcmpestrm pcmpistri pcmpistrm
""".split())
EXTENDING_FLAG = re.compile(r"^-m(avx|fma|f16c|bmi|sse3|ssse3|sse4|popcnt|lzcnt|xsave)")


def extended_objects(build_dir):
    """Object files compiled with ISA-extending flags; fails on any -march but x86-64."""
    objects = []
    for entry in json.loads((build_dir / "compile_commands.json").read_text()):
        args = shlex.split(entry["command"])
        for a in args:
            if a.startswith("-march=") and a != "-march=x86-64":
                sys.exit(f"error: {entry['file']} is compiled with {a}")
        if any(EXTENDING_FLAG.match(a) for a in args):
            obj = Path(entry["directory"]) / args[args.index("-o") + 1]
            if obj.exists():  # listed but not built: not in any binary either
                objects.append(obj)
    return objects


def strong_text_symbols(objects):
    names = set()
    for obj in objects:
        out = subprocess.run(["nm", "--defined-only", str(obj)], check=True,
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "Tt":
                names.add(parts[2])
    return names


def functions_beyond_baseline(binary):
    """{function symbol: first offending instruction} from objdump's disassembly."""
    found, current = {}, None
    proc = subprocess.Popen(["objdump", "-d", "--no-show-raw-insn", str(binary)],
                            stdout=subprocess.PIPE, text=True)
    for line in proc.stdout:
        header = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if header:
            current = header.group(1)
            continue
        fields = line.split("\t")
        if current is None or len(fields) < 2 or current in found:
            continue
        insn = fields[1].strip()
        mnemonic = insn.split(" ")[0]
        if (mnemonic.startswith("v") and mnemonic not in ("verr", "verw")) or \
                mnemonic in BEYOND_BASELINE or "%ymm" in insn or "%zmm" in insn:
            found[current] = insn
    if proc.wait() != 0:
        sys.exit(f"error: objdump failed on {binary}")
    return found


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    build_dir = Path(sys.argv[1])
    objects = extended_objects(build_dir)
    allowed = strong_text_symbols(objects)
    bad = 0
    for binary in sys.argv[2:]:
        found = functions_beyond_baseline(binary)
        outside = {f: i for f, i in found.items() if f not in allowed}
        for function, insn in sorted(outside.items()):
            print(f"error: {binary}: {function} uses '{insn}' outside the AVX2 sources")
        bad += len(outside)
        print(f"{Path(binary).name}: {len(found)} functions use instructions beyond baseline "
              f"x86-64, all from the {len(objects)} AVX2 objects" if not outside else
              f"{Path(binary).name}: {len(outside)} of {len(found)} such functions are outside")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
