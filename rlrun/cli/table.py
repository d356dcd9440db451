"""``rlrun-table FOLDER... [--out DIR] [--by KEYS] [--metric return|success] [--compare A B] [--aggregate
[--references FILE]]`` (and ``python -m rlrun.cli.table``): benchmark tables from run and sweep folders
(:mod:`rlrun.table.write`), and aggregates across envs (:mod:`rlrun.table.aggregate`).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from rlrun.config.errors import UserError, report_user_errors
from rlrun.table.write import METRICS, write_tables, written_files


def _keys(text: str) -> list[str]:
    keys = [key.strip() for key in text.split(",") if key.strip()]
    if not keys:
        raise argparse.ArgumentTypeError("give dotted config keys, comma-separated, e.g. algo.n_steps,env.n_envs")
    return keys


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Benchmark tables (IQM with 95% bootstrap CI, learning curves) from run and sweep folders.",
        epilog="Writes table.md, table.csv, table.json and curves.png. Example: rlrun-table outputs/sweeps/presets",
    )
    parser.add_argument("folders", nargs="+", type=Path, metavar="FOLDER", help="run, sweep or any folder of runs")
    parser.add_argument("--out", type=Path, help="folder for the table files (default: the one FOLDER given)")
    parser.add_argument("--by", type=_keys, metavar="KEYS", help="group by these config keys, not by config hash")
    parser.add_argument("--metric", choices=METRICS, default="return", help="score of curves and --compare")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"), help="P(a run of group A beats one of B)")
    parser.add_argument(
        "--aggregate",
        action="store_true",
        help="also normalised scores across envs: IQM, median, mean, optimality gap, performance profiles",
    )
    parser.add_argument(
        "--references",
        type=Path,
        metavar="FILE",
        help="random and reference score per env id for --aggregate (default: conf/benchmark/references.yaml)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point: print the table and where its files are."""
    prog = "python -m rlrun.cli.table" if sys.argv[0].endswith("table.py") else "rlrun-table"
    args = _parser(prog).parse_args(argv)
    logging.basicConfig(format=f"{prog}: warning: %(message)s", level=logging.WARNING)
    with report_user_errors(prog):
        if args.out is None and len(args.folders) > 1:
            raise UserError(
                f"{len(args.folders)} folders given and no --out", "name the folder for the table files: --out DIR"
            )
        if args.references is not None and not args.aggregate:
            raise UserError("--references without --aggregate", "add --aggregate, or leave --references out")
        out = args.out if args.out is not None else args.folders[0]
        path = write_tables(
            args.folders,
            out,
            by=args.by,
            metric=args.metric,
            compare=tuple(args.compare) if args.compare else None,
            aggregate=args.aggregate,
            references=args.references,
        )
    print(path.read_text(encoding="utf-8"), end="")
    if args.aggregate:
        print("\n" + (path.parent / "aggregate.md").read_text(encoding="utf-8"), end="")
    print(f"\nwrote {', '.join(written_files(args.aggregate))} in {path.parent}")


if __name__ == "__main__":
    main()
