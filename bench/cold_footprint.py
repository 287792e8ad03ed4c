#!/usr/bin/env python3
"""What the first codegen in a fresh process executes, counted exactly.

  bench/cold_footprint.py BUILD_DIR [FUNCTIONS]

Runs BUILD_DIR/bench/cold_bench's fresh-process child (vector_add f32 sm_80:
VectorAddSpec::Build, the standard pipeline, PrintPtx) under valgrind's
callgrind with its cache simulation, collecting only inside one stage at a
time, and prints for each stage:
  instr        instructions executed
  code lines   distinct 64-byte lines of code executed (and 4 KiB pages)
  first-touch  code and data lines that no earlier code of the process had
               touched (callgrind's last-level misses; its simulated LL is
               larger than the program), i.e. what the stage brings in cold
The numbers are deterministic, unlike a cold run's wall time, and are what
decides it: a fresh process pays for each line and each branch the first
time it runs. The FUNCTIONS (default 15) touching the most code lines in the
whole codegen follow. Needs valgrind.
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

STAGES = [
    ("codegen", "_ZN8ptxforge12_GLOBAL__N_17CodegenEv"),
    (" build (with Finish)", "_ZNK8ptxforge7kernels13VectorAddSpec5BuildENS_2ir6TargetE"),
    ("  Finish", "_ZN8ptxforge13KernelBuilder6FinishEv"),
    ("   verifier", "_ZN8ptxforge2ir12VerifyKernelERKNS0_6KernelE"),
    ("   CanonicalizeOrder", "_ZN8ptxforge2ir17CanonicalizeOrderERNS0_6KernelE"),
    (" pipeline", "_ZNK8ptxforge6passes8Pipeline3RunERNS_2ir6KernelE"),
    (" PrintPtx", "_ZN8ptxforge4emit8PrintPtxB5cxx11ERKNS_2ir6KernelESt8optionalINS1_10PtxVersionEE"),
]


def parse(path):
    """Distinct code lines and instructions executed per function, and the summary."""
    names = {}
    lines = collections.defaultdict(set)
    ir = collections.Counter()
    fn, addr, skip, summary, events = None, 0, False, [], []
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("summary:"):
                summary = [int(x) for x in line.split()[1:]]
            if not line or line.startswith(("ob=", "fl=", "fi=", "fe=", "cob=", "cfi=", "cfl=")):
                continue
            if line.startswith(("fn=", "cfn=")):
                m = re.match(r"c?fn=\((\d+)\)(?: (.*))?", line)
                if m.group(2) is not None:
                    names[m.group(1)] = m.group(2)
                if line.startswith("fn="):
                    fn = names[m.group(1)]
                continue
            if line.startswith("calls="):
                skip = True
                continue
            if line[0] not in "+-*0123456789":
                continue
            parts = line.split()
            a = parts[0]
            if a.startswith("0x"):
                addr = int(a, 16)
            elif a[0] == "+":
                addr += int(a[1:])
            elif a[0] == "-":
                addr -= int(a[1:])
            if skip:  # a call site: its cost is the callee's
                skip = False
                continue
            if len(parts) > 2 and int(parts[2]):
                lines[fn].add(addr >> 6)
                ir[fn] += int(parts[2])
    return lines, ir, dict(zip(events, summary))


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    program = os.path.join(sys.argv[1], "bench", "cold_bench")
    if not os.access(program, os.X_OK):
        sys.exit("cold_footprint: %s is not there: build the cold_bench target of %s" % (program, sys.argv[1]))
    if shutil.which("valgrind") is None:
        sys.exit("cold_footprint: valgrind is not installed (apt-get install valgrind)")
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    print("%-22s %8s %11s %6s %18s" % ("stage", "instr", "code lines", "pages", "first-touch c/d"))
    whole = None
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        for label, symbol in STAGES:
            subprocess.run(["valgrind", "--tool=callgrind", "--cache-sim=yes", "--demangle=no", "--dump-instr=yes",
                            "--toggle-collect=" + symbol, "--callgrind-out-file=" + out, program, "--child", "first"],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            lines, ir, s = parse(out)
            every = set().union(*lines.values()) if lines else set()
            print("%-22s %8d %11d %6d %9d / %-6d" % (label, s.get("Ir", 0), len(every), len({x >> 6 for x in every}),
                                                    s.get("ILmr", 0), s.get("DLmr", 0) + s.get("DLmw", 0)))
            if whole is None:
                whole = (lines, ir)
    print("\nfunctions of the codegen touching the most code lines (lines, instructions):")
    lines, ir = whole
    for fn, s in sorted(lines.items(), key=lambda x: -len(x[1]))[:top]:
        print("%5d %7d  %s" % (len(s), ir[fn], fn))


if __name__ == "__main__":
    main()
