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
  jcc / call   distinct conditional branches and call instructions of the
               program itself that the stage executes (objdump tells which
               executed instructions are branches and calls)
  Bc / Bcm     conditional branches executed, and those mispredicted by
               callgrind's model of a branch predictor that starts cold (a
               table of two-bit counters, not the hardware's, but it follows
               the branches whose outcome changes from one execution to the
               next, which a cold predictor keeps getting wrong)
The numbers are deterministic, unlike a cold run's wall time. What a fresh
process pays for is mostly the branches: on the machines here a call site
run for the first time costs about 5 ns and a taken branch about 5 ns more
than on its next run, a 64-byte line of straight code about 1 ns
(build/bench/frontend_cost; bench/COLD_PATH.md, session 18),
so the jcc and call columns are the ones to bring down. The FUNCTIONS
(default 15) touching the most code lines in the whole codegen follow.
Needs valgrind and objdump.
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

BUILD = "_ZNK8ptxforge7kernels13VectorAddSpec5BuildENS_2ir6TargetE"
PIPELINE = "_ZNK8ptxforge6passes8Pipeline3RunERNS_2ir6KernelE"
PRINT = "_ZN8ptxforge4emit8PrintPtxB5cxx11ERKNS_2ir6KernelESt8optionalINS1_10PtxVersionEE"
STAGES = [
    # The three calls cold_bench times, one after the other (each toggles
    # collection on at its entry and off at its return). Not the whole of
    # its Codegen(), which also destroys the kernel and the PTX after the
    # timed interval (110 code lines more in session 34; among them, the
    # first kernel destroyed in a process registers the thread's kept body
    # chunk with __cxa_thread_atexit, which runs the dynamic linker's
    # symbol lookup: bench/COLD_PATH.md, session 33).
    ("codegen", [BUILD, PIPELINE, PRINT]),
    (" build (with Finish)", [BUILD]),
    # Build with Finish toggled off again: the builder calls alone.
    ("  builder calls", [BUILD, "_ZN8ptxforge13KernelBuilder6FinishEv"]),
    ("  Finish", ["_ZN8ptxforge13KernelBuilder6FinishEv"]),
    ("   verifier", ["_ZN8ptxforge2ir12VerifyKernelERKNS0_6KernelE"]),
    ("   CanonicalizeOrder", ["_ZN8ptxforge2ir17CanonicalizeOrderERNS0_6KernelE"]),
    (" pipeline", [PIPELINE]),
    ("  cse", ["_ZN8ptxforge6passes7CsePass7RunWithERNS_2ir6KernelERNS0_8AnalysesE"]),
    (" PrintPtx", [PRINT]),
]


def branch_kinds(program):
    """By address in the program, 'jcc' or 'call' for its conditional branches and calls."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", program], check=True, capture_output=True,
                         text=True).stdout
    kinds = {}
    for line in out.splitlines():
        m = re.match(r"\s+([0-9a-f]+):\s+(\S+)", line)
        if m is None:
            continue
        mnemonic = m.group(2)
        if mnemonic.startswith("call"):
            kinds[int(m.group(1), 16)] = "call"
        elif mnemonic.startswith("j") and not mnemonic.startswith("jmp"):
            kinds[int(m.group(1), 16)] = "jcc"
    return kinds


def parse(path, program):
    """Distinct code lines and instructions executed per function, the
    program's own instructions executed, and the summary."""
    names, objects = {}, {}
    lines = collections.defaultdict(set)
    ir = collections.Counter()
    own = set()  # addresses of the program's instructions executed (not the libraries')
    obj = None
    fn, addr, skip, summary, events = None, 0, False, [], []
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("summary:"):
                summary = [int(x) for x in line.split()[1:]]
            if line.startswith(("ob=", "cob=")):
                m = re.match(r"c?ob=\((\d+)\)(?: (.*))?", line)
                if m.group(2) is not None:
                    objects[m.group(1)] = m.group(2)
                if line.startswith("ob="):
                    obj = objects[m.group(1)]
                continue
            if not line or line.startswith(("fl=", "fi=", "fe=", "cfi=", "cfl=")):
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
                if obj is not None and os.path.realpath(obj) == program:
                    own.add(addr)
    return lines, ir, own, dict(zip(events, summary))


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    program = os.path.realpath(os.path.join(sys.argv[1], "bench", "cold_bench"))
    if not os.access(program, os.X_OK):
        sys.exit("cold_footprint: %s is not there: build the cold_bench target of %s" % (program, sys.argv[1]))
    if shutil.which("valgrind") is None:
        sys.exit("cold_footprint: valgrind is not installed (apt-get install valgrind)")
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    kinds = branch_kinds(program)
    print("%-22s %8s %11s %6s %18s %6s %6s %7s %6s" % ("stage", "instr", "code lines", "pages", "first-touch c/d",
                                                        "jcc", "call", "Bc", "Bcm"))
    whole = None
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        for label, symbols in STAGES:
            subprocess.run(["valgrind", "--tool=callgrind", "--cache-sim=yes", "--branch-sim=yes", "--demangle=no",
                            "--dump-instr=yes"] + ["--toggle-collect=" + x for x in symbols] +
                           ["--callgrind-out-file=" + out, program, "--child", "first"],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            lines, ir, own, s = parse(out, program)
            every = set().union(*lines.values()) if lines else set()
            sites = collections.Counter(kinds[a] for a in own if a in kinds)
            print("%-22s %8d %11d %6d %9d / %-6d %6d %6d %7d %6d" %
                  (label, s.get("Ir", 0), len(every), len({x >> 6 for x in every}), s.get("ILmr", 0),
                   s.get("DLmr", 0) + s.get("DLmw", 0), sites["jcc"], sites["call"], s.get("Bc", 0), s.get("Bcm", 0)))
            if whole is None:
                whole = (lines, ir)
    print("\nfunctions of the codegen touching the most code lines (lines, instructions):")
    lines, ir = whole
    for fn, s in sorted(lines.items(), key=lambda x: -len(x[1]))[:top]:
        print("%5d %7d  %s" % (len(s), ir[fn], fn))


if __name__ == "__main__":
    main()
