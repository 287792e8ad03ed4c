#!/usr/bin/env python3
"""A/B of the first codegen in a fresh process: two cold_bench binaries, interleaved.

  usage: bench/cold_ab.py [--mode=MODE] N OLD_COLD_BENCH NEW_COLD_BENCH   (N even)

Runs N iterations; each starts one fresh `cold_bench --child first` of each
binary, the order alternating, so that both see the same machine state (the
machines here have a fast and a slow mode and are shared). Prints the medians
of the build, passes, print and codegen wall µs of each binary and the
NEW/OLD ratio of the codegen medians: the figure to compare builds by.

--mode picks what each child times (cold_bench's child modes): first (the
default) its first codegen; after a codegen that follows, twice, an
untimed codegen and cold_bench's disturbance (the 64 MiB cache sweep and
the heap churn): "after other work", one sample per process, since the
machine's fast and slow modes last longer than a cold_bench run; heap,
prefault, cached and second the diagnostic rows of the fresh process.

Each binary is first copied to a new file, the copy is dropped from the page
cache, and the copies run, after one untimed child of each, which reads its
copy back from the disk: both arms then start from the page-cache state of a
program loaded from disk. How a file came into the page cache decides how much
of its code a process's start-up maps (the kernel maps up to 64 KiB around each
fault, within what the cache holds as one piece): on session 33's machine
(Linux 6.18, ext4) a copy made with copy_file_range or sendfile (cp, Python's
shutil.copy) had all of the codegen's code mapped by start-up, while the
linker's output, a file written with write(), and a file read back from the
disk had one 64 KiB window of it unmapped, and their first codegen took 17-31%
longer than the copies' (bench/COLD_PATH.md, session 33). Before session 33 the
copies stayed in the cache as copied: the same binaries gave 1.039 as linked
and 0.966-0.969 as copies (session 23). A wrapper script (`exec env VAR=...
binary "$@"`) is copied and dropped as it is, the binary it runs is not.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


MODES = ("first", "after", "heap", "prefault", "cached", "second")


def main():
    args = sys.argv[1:]
    mode = "first"
    if args and args[0].startswith("--mode="):
        mode = args.pop(0)[len("--mode="):]
        if mode not in MODES:
            print("cold_ab: --mode=%s is not one of %s" % (mode, ", ".join(MODES)), file=sys.stderr)
            sys.exit(2)
    if len(args) != 3 or not args[0].isdigit() or int(args[0]) < 2 or int(args[0]) % 2:
        print("usage: bench/cold_ab.py [--mode=MODE] N OLD_COLD_BENCH NEW_COLD_BENCH (N: an even count of iterations)",
              file=sys.stderr)
        sys.exit(2)
    n = int(args[0])
    binaries = args[1:3]
    for b in binaries:
        if not os.access(b, os.X_OK):
            print(f"cold_ab: {b} is not an executable cold_bench", file=sys.stderr)
            sys.exit(1)
    scratch = tempfile.mkdtemp(prefix="cold_ab.")
    copies = []
    for arm, b in enumerate(binaries):
        copies.append(os.path.join(scratch, "%d_%s" % (arm, os.path.basename(b))))
        shutil.copy2(b, copies[-1])
        drop_from_page_cache(copies[-1])
    try:
        for arm in (0, 1):  # reads each copy back from the disk, untimed
            subprocess.run([copies[arm], "--child", mode], capture_output=True)
        times = run(n, binaries, copies, mode)
    finally:
        shutil.rmtree(scratch)
    for arm, b in enumerate(binaries):
        medians = [statistics.median(column) for column in zip(*times[arm])]
        print("%-40s build %6.1f passes %6.1f print %6.1f codegen %6.1f" % (b, *medians))
    old, new = (statistics.median(t[3] for t in times[arm]) for arm in (0, 1))
    print("codegen median, new / old: %.3f" % (new / old))


def drop_from_page_cache(path):
    """Writes the file to the disk and drops its pages from the page cache."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def run(n, binaries, copies, mode):
    """N iterations of a fresh child of each copy, the order alternating: the four times of each, by arm."""
    times = [[], []]  # by arm, so that an A/A run (the same binary twice) shows its noise
    for i in range(n):
        for arm in ((0, 1) if i % 2 == 0 else (1, 0)):
            child = subprocess.run([copies[arm], "--child", mode], capture_output=True, text=True)
            fields = child.stdout.split()
            if child.returncode != 0 or len(fields) < 4:
                print(f"cold_ab: `{binaries[arm]} --child {mode}` failed: {child.stderr.strip()}", file=sys.stderr)
                sys.exit(1)
            times[arm].append([float(x) for x in fields[:4]])
    return times


if __name__ == "__main__":
    main()
