#!/usr/bin/env python3
"""Would strength reduction of widened indices pay? Measures it on reduce_sum.

The strength pass (passes/strength_reduction.h) leaves the widened address
form `mul.wide.u32 i, 4` + `add.u64 b, ...` of a 32-bit loop counter alone.
This script takes reduce_sum's PTX from ptx-dump for each target, rewrites its
strided loop by hand into the reduced form (a 64-bit pointer set before the
loop and stepped by `stride * 4` in it), assembles both with `ptxas -v` and
prints registers and, when nvdisasm is found, the SASS instructions of the
loop (from the label its backward branch goes to, through that branch).

  usage: bench/widened_strength.py [BUILD_DIR]   (default: build)
  nvdisasm: $NVDISASM, else on PATH, else under $CUDA_HOME/bin.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

TARGETS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"]


def fail(message):
    print(f"widened_strength: {message}", file=sys.stderr)
    sys.exit(1)


def reduce_loop(ptx):
    """Rewrites the one strided loop of reduce_sum into the stepped-pointer
    form; fails when the PTX no longer has the expected shape."""
    loop = re.search(
        r"\tmov\.u32 (%r\d+), (%r\d+);\n\$L(\d+)_loop:\n"
        r"(?P<head>(?:\t[^\n]*\n){2})"
        r"\tmul\.wide\.u32 (%rd\d+), \1, 4;\n"
        r"\tadd\.u64 (%rd\d+), (%rd\d+), \5;\n"
        r"\tld\.global\.f32 (%f\d+), \[\6\];\n"
        r"(?P<body>(?:\t[^\n]*\n)*?)"
        r"\tadd\.u32 (%r\d+), \1, (%r\d+);\n"
        r"\tmov\.u32 \1, \10;\n"
        r"\tbra \$L\3_loop;\n", ptx)
    if not loop:
        fail("reduce_sum's loop no longer has the shape this script rewrites")
    count = int(re.search(r"\.reg \.b64 \t%rd<(\d+)>;", ptx).group(1))
    ptr, step = f"%rd{count}", f"%rd{count + 1}"
    i, start, label = loop.group(1), loop.group(2), loop.group(3)
    base, value, stride = loop.group(7), loop.group(8), loop.group(11)
    reduced = (
        f"\tmov.u32 {i}, {start};\n"
        f"\tmul.wide.u32 {ptr}, {start}, 4;\n"
        f"\tadd.u64 {ptr}, {base}, {ptr};\n"
        f"\tmul.wide.u32 {step}, {stride}, 4;\n"
        f"$L{label}_loop:\n{loop.group('head')}"
        f"\tld.global.f32 {value}, [{ptr}];\n{loop.group('body')}"
        f"\tadd.u32 {loop.group(10)}, {i}, {stride};\n"
        f"\tmov.u32 {i}, {loop.group(10)};\n"
        f"\tadd.u64 {ptr}, {ptr}, {step};\n"
        f"\tbra $L{label}_loop;\n")
    ptx = ptx[:loop.start()] + reduced + ptx[loop.end():]
    return ptx.replace(f".reg .b64 \t%rd<{count}>;",
                       f".reg .b64 \t%rd<{count + 2}>;")


def loop_length(listing):
    """SASS instructions of the loop in an nvdisasm listing: from the label a
    backward branch goes to, through that branch. reduce_sum has one loop
    before its reduction tree (whose branches all go forward)."""
    labels, code = {}, []  # label -> index of the instruction after it
    for line in listing.splitlines():
        label = re.match(r"(\.L_x_\d+):", line)
        if label:
            labels[label.group(1)] = len(code)
        elif re.match(r"\s+/\*[0-9a-f]{4}\*/", line):
            code.append(line)
    for n, line in enumerate(code):
        target = re.search(r"BRA `\((\.L_x_\d+)\)", line)
        if target and labels.get(target.group(1), n + 1) <= n:
            return n - labels[target.group(1)] + 1
    fail("no backward branch in reduce_sum's SASS")


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    dump = os.path.join(build, "tools", "ptx-dump")
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    ptxas = os.path.join(cuda, "bin", "ptxas")
    if not os.access(dump, os.X_OK):
        fail(f"no ptx-dump at {dump} (give the build directory)")
    if not os.access(ptxas, os.X_OK):
        fail(f"no ptxas at {ptxas} (set CUDA_HOME)")
    nvdisasm = (os.environ.get("NVDISASM") or shutil.which("nvdisasm")
                or shutil.which("nvdisasm", path=os.path.join(cuda, "bin")))
    print(f"{'target':8} {'registers':>9} {'reduced':>8} "
          f"{'loop SASS':>9} {'reduced':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for target in TARGETS:
            ptx = subprocess.run([dump, "reduce_sum", f"--target={target}"],
                                 check=True, capture_output=True,
                                 text=True).stdout
            row = []
            for form, text in (("as", ptx), ("reduced", reduce_loop(ptx))):
                source = os.path.join(tmp, f"{form}.ptx")
                cubin = os.path.join(tmp, f"{form}.cubin")
                with open(source, "w") as f:
                    f.write(text)
                log = subprocess.run(
                    [ptxas, f"-arch={target}", "-v", source, "-o", cubin],
                    capture_output=True, text=True)
                if log.returncode != 0:
                    fail(f"ptxas -arch={target} failed on the {form} form: "
                         f"{log.stderr.strip()}")
                used = re.search(r"Used (\d+) registers", log.stderr)
                sass = "-"
                if nvdisasm:
                    listing = subprocess.run([nvdisasm, "-c", cubin], check=True,
                                             capture_output=True, text=True).stdout
                    sass = str(loop_length(listing))
                row.append((used.group(1) if used else "?", sass))
            print(f"{target:8} {row[0][0]:>9} {row[1][0]:>8} "
                  f"{row[0][1]:>9} {row[1][1]:>8}")


if __name__ == "__main__":
    main()
