#!/usr/bin/env python3
"""Runs two homed-bench binaries alternately and prints the medians side by side.

The machine is noisy: one run of each, then the other, `--pairs` times, and the
median of each figure. Figures: round trips and event rates (`wire`), and the
fan-out latencies (`fanout`).

  Scripts/compare-bench.py OLD_BENCH NEW_BENCH [--pairs 3] [--fanout-ms 1000] [--skip-fanout]
"""
import argparse
import re
import statistics
import subprocess

WIRE = {
    "HomeClient round trip p50 (us)": (r"homed p50 / p99\s+([\d.]+) us", 1),
    "HomeClient round trip p99 (us)": (r"homed p50 / p99\s+[\d.]+ us / ([\d.]+) us", 1),
    "C client read p50 (us)": (r"C read p50 / p99\s+([\d.]+) us", 1),
    "C client read p99 (us)": (r"C read p50 / p99\s+[\d.]+ us / ([\d.]+) us", 1),
    "events to one subscriber, Swift writer (events/s)": (r"homed \(Swift writer\)\s+(\d+) events/s", 1),
    "events to one subscriber, C writer (events/s)": (r"homed \(C writer\)\s+(\d+) events/s", 1),
}

FANOUT_POINTS = ["100 sub x 1000/s", "1000 sub x 100/s", "1000 sub x 1000/s"]


def fanout_figures(text):
    figures = {}
    for point in FANOUT_POINTS:
        start = text.find(point + ":")
        if start < 0:
            continue
        section = text[start:]
        end = section.find("\n\n")
        section = section[: end if end > 0 else len(section)]
        floor = re.search(r"floor p50 / p99\s+([\d.]+) us / ([\d.]+) us", section)
        c = re.search(r"C subscribers:\n\s+p50 / p99\s+([\d.]+) us / ([\d.]+) us", section)
        swift = re.search(r"HomeClient:\n\s+p50 / p99\s+([\d.]+) us / ([\d.]+) us", section)
        if floor:
            figures[f"{point} floor p99 (us)"] = float(floor.group(2))
        if c:
            figures[f"{point} C subscribers p50 (us)"] = float(c.group(1))
            figures[f"{point} C subscribers p99 (us)"] = float(c.group(2))
            if floor:
                figures[f"{point} C subscribers p99 / floor p99"] = float(c.group(2)) / float(floor.group(2))
        if swift:
            figures[f"{point} HomeClient p99 (us)"] = float(swift.group(2))
        lost = re.findall(r"-> (.*)", section)
        figures[f"{point} all delivered"] = 1.0 if lost and all(x == "nothing lost" for x in lost) else 0.0
    return figures


def run(binary, args):
    return subprocess.run([binary] + args, capture_output=True, text=True, check=True).stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--fanout-ms", type=int, default=1000)
    parser.add_argument("--skip-fanout", action="store_true")
    parser.add_argument("--skip-wire", action="store_true")
    options = parser.parse_args()
    results = {"old": {}, "new": {}}
    for pair in range(options.pairs):
        for label, binary in (("old", options.old), ("new", options.new)):
            figures = {}
            if not options.skip_wire:
                text = run(binary, ["wire", "--runs", "1"])
                for name, (pattern, _) in WIRE.items():
                    match = re.search(pattern, text)
                    if match:
                        figures[name] = float(match.group(1))
            if not options.skip_fanout:
                figures.update(fanout_figures(run(binary, ["fanout", "--duration-ms", str(options.fanout_ms)])))
            for name, value in figures.items():
                results[label].setdefault(name, []).append(value)
            print(f"pair {pair + 1} {label}: done", flush=True)
    names = list(results["new"].keys())
    width = max(len(n) for n in names)
    print(f"\nmedians of {options.pairs} alternating runs")
    print(f"{'figure':<{width}}  {'old':>12}  {'new':>12}  {'new/old':>8}")
    for name in names:
        old = statistics.median(results["old"].get(name, [float("nan")]))
        new = statistics.median(results["new"][name])
        ratio = new / old if old else float("nan")
        print(f"{name:<{width}}  {old:>12.2f}  {new:>12.2f}  {ratio:>8.3f}")


if __name__ == "__main__":
    main()
