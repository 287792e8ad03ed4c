#!/usr/bin/env python3
"""A/B of the first codegen in a fresh process: two cold_bench binaries, interleaved.

  usage: bench/cold_ab.py N OLD_COLD_BENCH NEW_COLD_BENCH   (N even)

Runs N iterations; each starts one fresh `cold_bench --child first` of each
binary, the order alternating, so that both see the same machine state (the
machines here have a fast and a slow mode and are shared). Prints the medians
of the build, passes, print and codegen wall µs of each binary and the
NEW/OLD ratio of the codegen medians: the figure to compare builds by.
"""
import os
import statistics
import subprocess
import sys


def main():
    if len(sys.argv) != 4 or not sys.argv[1].isdigit() or int(sys.argv[1]) < 2 or int(sys.argv[1]) % 2:
        print("usage: bench/cold_ab.py N OLD_COLD_BENCH NEW_COLD_BENCH (N: an even count of iterations)", file=sys.stderr)
        sys.exit(2)
    n = int(sys.argv[1])
    binaries = sys.argv[2:4]
    for b in binaries:
        if not os.access(b, os.X_OK):
            print(f"cold_ab: {b} is not an executable cold_bench", file=sys.stderr)
            sys.exit(1)
    times = [[], []]  # by arm, so that an A/A run (the same binary twice) shows its noise
    for i in range(n):
        for arm in ((0, 1) if i % 2 == 0 else (1, 0)):
            b = binaries[arm]
            child = subprocess.run([b, "--child", "first"], capture_output=True, text=True)
            fields = child.stdout.split()
            if child.returncode != 0 or len(fields) < 4:
                print(f"cold_ab: `{b} --child first` failed: {child.stderr.strip()}", file=sys.stderr)
                sys.exit(1)
            times[arm].append([float(x) for x in fields[:4]])
    for arm, b in enumerate(binaries):
        medians = [statistics.median(column) for column in zip(*times[arm])]
        print("%-40s build %6.1f passes %6.1f print %6.1f codegen %6.1f" % (b, *medians))
    old, new = (statistics.median(t[3] for t in times[arm]) for arm in (0, 1))
    print("codegen median, new / old: %.3f" % (new / old))


if __name__ == "__main__":
    main()
