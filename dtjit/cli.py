"""The ``dtjit`` command: ``fit``, ``predict``, ``show``, ``bench`` and ``compile``.

Installed as the ``dtjit`` console script and runnable as ``python -m dtjit``. Every command
is a function of the parsed arguments; :func:`main` turns an error while running into one
line ``dtjit: error: ...`` on stderr and exit status 1 (``--debug`` shows the traceback
instead); a malformed command line gets argparse's usage message and status 2. pandas,
pyarrow and tqdm are imported only by the commands that need them.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

import numpy as np

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2  # argparse's own status for a bad command line
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what shells report for Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what shells report for a tool whose reader went away
EXIT_TERMINATED = 143  # 128 + SIGTERM (`kill`, `timeout`, a job scheduler)
DEFAULT_BLOCK_ROWS = 1 << 17
AUTO_MAX_CLASSES = 20
MAX_LISTED_CLASSES = 10
EXPORTERS = {
    "text": "export_text",
    "rules": "export_rules",
    "dot": "export_graphviz",
    "mermaid": "export_mermaid",
}
# show prints its header line as a comment of the output's language, so `> tree.dot` stays valid
HEADER_COMMENT = {"text": "", "rules": "", "dot": "// ", "mermaid": "%% "}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``dtjit`` command line.

    Parameters
    ----------
    argv : sequence of str, default=None
        Arguments without the program name; ``None`` reads ``sys.argv[1:]``.

    Returns
    -------
    int
        Exit status: 0 on success, 1 on an error (one line ``dtjit: error: ...`` on stderr),
        2 on a malformed command line (argparse's usage message), 130 when interrupted
        (Ctrl-C), 141 when the reader of its output went away (a closed pipe), 143 when
        terminated (SIGTERM); an interrupted or terminated command leaves no partial output.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help / --version (0) or a usage error already printed (2)
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    try:
        with _terminate_as_exception():
            status = args.command(args)
            sys.stdout.flush()  # a closed pipe fails here, inside the handler, not at exit
        return status
    except _Terminated:
        if args.debug:
            raise
        print("dtjit: error: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except BrokenPipeError:
        # The reader stopped early (`dtjit show model.npz | head`): stop quietly, as Unix
        # tools do. stdout goes to /dev/null so the interpreter's final flush cannot fail.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        if args.debug:
            raise
        print("dtjit: error: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        if args.debug:
            raise
        print(f"dtjit: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_ERROR


class _Terminated(BaseException):
    """SIGTERM, raised like Ctrl-C's KeyboardInterrupt so that partial outputs are removed."""


@contextlib.contextmanager
def _terminate_as_exception() -> Iterator[None]:
    """Turn SIGTERM into :class:`_Terminated` inside the block (main thread only).

    By default SIGTERM ends the process at once, leaving a ``dtjit predict`` output's
    temporary file behind; as an exception it unwinds through the writers' cleanup.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: Any) -> None:
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser of the ``dtjit`` command and its five subcommands.

    Returns
    -------
    argparse.ArgumentParser
        Parsing sets ``command`` (the function running the subcommand) and ``debug``.
    """
    from . import __version__

    debug_help = "show the full traceback of an error"
    parser = argparse.ArgumentParser(
        prog="dtjit",
        description="Exact decision trees compiled by Numba: fit, predict, inspect, benchmark.",
        epilog="Run `dtjit COMMAND --help` for the options of a command.",
    )
    parser.add_argument("--debug", action="store_true", help=debug_help)
    # --debug is accepted after the command too; SUPPRESS keeps the subparser from resetting
    # the value `dtjit --debug COMMAND` set.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=debug_help)
    parser.add_argument("--version", action="version", version=f"dtjit {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    _add_fit(commands, common)
    _add_predict(commands, common)
    _add_show(commands, common)
    _add_bench(commands, common)
    _add_compile(commands, common)
    return parser


def _add_command(
    commands: Any, common: argparse.ArgumentParser, run: Callable, summary: str, description: str
) -> argparse.ArgumentParser:
    """Add the subcommand ``run`` runs (``_run_fit`` -> ``fit``) and return its parser."""
    name = run.__name__.removeprefix("_run_")
    command = commands.add_parser(name, parents=[common], help=summary, description=description)
    command.set_defaults(command=run)
    return command


# -- fit -------------------------------------------------------------------------------------
def _add_fit(commands: Any, common: argparse.ArgumentParser) -> None:
    fit = _add_command(
        commands,
        common,
        _run_fit,
        "fit a tree on a data file and save it",
        (
            "Fit a decision tree on DATA (.csv[.gz], .parquet, .npy, .npz) and save it with "
            "dtjit.save. Table columns other than the target are the features and their "
            "names are kept in the model; they must be numeric, except the columns listed "
            "with --categorical, which may hold text (leave other text columns out with --drop). "
            "With --validation-fraction or --test it also reports a held-out score."
        ),
    )
    fit.add_argument("data", metavar="DATA", help="training data file")
    fit.add_argument(
        "-o", "--output", required=True, metavar="MODEL", help="model file to write (.npz)"
    )
    target = fit.add_argument_group("target")
    target.add_argument(
        "--target",
        metavar="COLUMN",
        help="target column: its name in a table, its integer index in an array",
    )
    target.add_argument(
        "--target-file", metavar="Y.npy", help="the target as a 1-D .npy file instead"
    )
    target.add_argument(
        "--task",
        choices=("auto", "classification", "regression"),
        default="auto",
        help=(
            "auto (default): classification when the target is not numeric (text, booleans) "
            f"or holds whole numbers with at most {AUTO_MAX_CLASSES} distinct values; "
            "regression otherwise"
        ),
    )
    columns = fit.add_argument_group("columns")
    columns.add_argument(
        "--drop",
        action="append",
        default=[],
        metavar="COLS",
        help="table columns to leave out of the features, comma-separated (repeatable)",
    )
    columns.add_argument(
        "--categorical",
        action="append",
        default=[],
        metavar="COLS",
        help=(
            "categorical feature columns, comma-separated (repeatable): names in a table "
            "(text values allowed, mapped to codes and kept in the model), integer indices "
            "of the feature array for .npy/.npz (values must be integer codes)"
        ),
    )
    columns.add_argument("--x-key", default="X", help="features array in an .npz (default X)")
    columns.add_argument("--y-key", default="y", help="target array in an .npz (default y)")
    held_out = fit.add_argument_group(
        "held-out score", "one of these; without them only the training score is shown"
    ).add_mutually_exclusive_group()
    held_out.add_argument(
        "--validation-fraction",
        type=_open_fraction,
        metavar="F",
        help=(
            "hold out this fraction of DATA's rows (0 < F < 1; stratified by class when "
            "possible, shuffled with --random-state, default seed 0), fit on the rest and "
            "report the score on them; the saved model is the one fitted on the rest"
        ),
    )
    held_out.add_argument(
        "--test",
        metavar="FILE",
        help=(
            "score the fitted model on this file, read like DATA (same --target, --drop, "
            "--categorical, --y-key; table columns are matched by name)"
        ),
    )
    tree = fit.add_argument_group(
        "tree parameters", "passed to the estimator, which validates them (defaults as there)"
    )
    for flag, parse, text in TREE_OPTIONS:
        tree.add_argument(flag, type=parse, help=text)


def _run_fit(args: argparse.Namespace) -> int:
    """Run ``dtjit fit``: read the data, fit, print a summary, save the model."""
    from . import DecisionTreeClassifier, DecisionTreeRegressor, save
    from ._datafiles import check_output_dir, read_training_data

    if not args.output.endswith(".npz"):  # a model file; a typo like `-o data.csv` overwrote data
        raise ValueError(f"the model file's name must end in .npz, got {args.output}")
    check_output_dir(args.output, inputs=(args.data, args.target_file, args.test))
    if args.test is not None and args.target_file is not None:
        raise ValueError(
            "--test reads its target from the file itself (--target or --y-key); it cannot be "
            "combined with --target-file."
        )
    categorical = _column_list(args.categorical)
    read = partial(
        read_training_data,
        target=args.target,
        drop=_column_list(args.drop),
        x_key=args.x_key,
        y_key=args.y_key,
        categorical=categorical,
    )
    data = read(args.data, target_file=args.target_file)
    test = read(args.test) if args.test is not None else None  # read before a long fit
    task = infer_task(data.y) if args.task == "auto" else args.task
    params = {}
    for flag, _, _ in TREE_OPTIONS:
        name = flag[2:].replace("-", "_")  # --max-depth -> max_depth, as argparse names it
        if getattr(args, name) is not None:  # unset: the estimator's default applies
            params[name] = getattr(args, name)
    if task == "regression" and "class_weight" in params:
        raise ValueError("--class-weight applies to classification only.")
    estimator = DecisionTreeClassifier if task == "classification" else DecisionTreeRegressor
    if categorical:
        params["categorical_features"] = (
            categorical if hasattr(data.X, "columns") else [_column_number(c) for c in categorical]
        )
    model = estimator(**params)
    n_rows, n_features = data.X.shape
    X, y = data.X, data.y
    if args.validation_fraction is not None:
        X, X_held, y, y_held = _hold_out(
            data, args.validation_fraction, task, args.random_state or 0
        )
    elif test is not None:
        X_held, y_held = _matching_columns(test.X, data.X, args.test), test.y
    start = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - start
    score = model.score(X, y)
    save(model, args.output)

    target = f"target {data.target_name!r}" if data.target_name else "target from file"
    score_name = "accuracy" if task == "classification" else "R2"
    chosen = " (--task auto)" if args.task == "auto" else ""
    print(f"read {args.data}: {n_rows} rows, {n_features} features, {target}; {task}{chosen}")
    print(describe(model))
    print(f"fit in {seconds:.2f} s on {len(y)} rows; training {score_name} {score:.4f}")
    if args.validation_fraction is not None:
        held_score = model.score(X_held, y_held)
        print(f"validation {score_name} {held_score:.4f} on {len(y_held)} held-out rows")
    elif test is not None:
        held_score = model.score(X_held, y_held)
        print(f"test {score_name} {held_score:.4f} on {len(y_held)} rows of {args.test}")
    print(f"saved {args.output}")
    return EXIT_OK


def _column_list(groups: Sequence[str]) -> list[str]:
    """``["a,b", "c"]`` (a repeatable comma-separated option) -> ``["a", "b", "c"]``."""
    return [name.strip() for group in groups for name in group.split(",") if name.strip()]


def _open_fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be strictly between 0 and 1, got {value}")
    return value


def _hold_out(data: Any, fraction: float, task: str, seed: int) -> tuple[Any, Any, Any, Any]:
    """Split ``data`` into fit rows and held-out rows (stratified when every class allows it)."""
    from sklearn.model_selection import train_test_split

    n_rows = len(data.y)
    n_held = int(np.ceil(fraction * n_rows))
    if n_held >= n_rows:  # ceil, as train_test_split rounds: at least one row is held out
        raise ValueError(
            f"--validation-fraction {fraction} of {n_rows} rows leaves no rows to fit on."
        )
    stratify = None
    if task == "classification":
        _, counts = np.unique(data.y.astype(str), return_counts=True)
        if counts.min() >= 2 and len(counts) <= n_held and len(counts) <= n_rows - n_held:
            stratify = data.y
    return train_test_split(data.X, data.y, test_size=n_held, random_state=seed, stratify=stratify)


def _matching_columns(X_test: Any, X_fit: Any, path: str) -> Any:
    """Return the test features in the fitted column order (tables), checked as predict does."""
    if not hasattr(X_fit, "columns"):
        return X_test
    missing = [c for c in X_fit.columns if c not in X_test.columns]
    if missing:
        listed = ", ".join(repr(c) for c in missing)
        raise ValueError(f"--test {path} lacks the feature column(s) {listed}.")
    return X_test[list(X_fit.columns)]


def _column_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(
            f"--categorical {text!r}: an array's categorical columns are integer indices."
        ) from None


def infer_task(y: np.ndarray) -> str:
    """Choose the task for ``--task auto`` from the target's values.

    Classification when the target is not numeric (strings, booleans, categories) or when
    every value is a whole number and there are at most ``AUTO_MAX_CLASSES`` (20) distinct
    values; regression otherwise (fractional values, or many distinct whole numbers such as
    prices or counts).

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Target values.

    Returns
    -------
    str
        ``"classification"`` or ``"regression"``.
    """
    y = np.asarray(y)
    if y.dtype.kind not in "iuf":
        return "classification"
    if y.dtype.kind == "f" and not np.all(np.isfinite(y) & (y == np.round(y))):
        return "regression"
    return "classification" if np.unique(y).size <= AUTO_MAX_CLASSES else "regression"


def describe(model: Any) -> str:
    """One line naming a fitted model's kind and size.

    Parameters
    ----------
    model : DecisionTreeClassifier or DecisionTreeRegressor
        A fitted estimator.

    Returns
    -------
    str
        For example ``DecisionTreeClassifier: 4 features, 9 nodes, 5 leaves, depth 3,
        3 classes (setosa, versicolor, virginica)``.
    """
    parts = [
        f"{model.n_features_in_} features",
        f"{model.tree_.node_count} nodes",
        f"{model.get_n_leaves()} leaves",
        f"depth {model.get_depth()}",
    ]
    if hasattr(model, "classes_"):
        labels = [_printable(str(c)) for c in model.classes_[:MAX_LISTED_CLASSES]]
        if len(model.classes_) > MAX_LISTED_CLASSES:
            labels.append(f"... {len(model.classes_) - MAX_LISTED_CLASSES} more")
        parts.append(f"{len(model.classes_)} classes ({', '.join(labels)})")
    return f"{type(model).__name__}: {', '.join(parts)}"


def _printable(text: str) -> str:
    r"""``text`` with line breaks and other unprintable characters escaped (as ``\n``).

    ``show`` prints :func:`describe` as a one-line comment of DOT or Mermaid: a label with a
    newline ended the comment and broke the file.
    """
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _escaped_names(values: Any) -> list[str] | None:
    """``values`` as :func:`_printable` strings if escaping changes one of them, else None."""
    if values is None:
        return None
    names = [str(value) for value in values]
    escaped = [_printable(name) for name in names]
    return escaped if escaped != names else None


# -- predict ---------------------------------------------------------------------------------
def _add_predict(commands: Any, common: argparse.ArgumentParser) -> None:
    predict = _add_command(
        commands,
        common,
        _run_predict,
        "predict a data file in blocks with a saved model",
        (
            "Predict every row of DATA (.csv[.gz], .parquet, .npy, .npz) with "
            "MODEL, block by block, and write OUT (.csv[.gz|.bz2|.xz], .parquet or .npy, by "
            "extension). "
            "A model fitted on named columns selects them by name, in any order; other "
            "columns (such as the target) are ignored unless --keep copies them to OUT. "
            "(The Python API, like scikit-learn, wants a DataFrame's columns in the fitted "
            "order; the command reads files whose column order it does not control.) "
            "OUT appears only when complete. Memory stays near one block whatever the "
            "size of DATA."
        ),
    )
    predict.add_argument("model", metavar="MODEL", help="model file written by dtjit fit")
    predict.add_argument("data", metavar="DATA", help="rows to predict")
    predict.add_argument("-o", "--output", required=True, metavar="OUT", help="predictions file")
    predict.add_argument(
        "--proba",
        action="store_true",
        help="class probabilities, one column per class (classifiers only)",
    )
    predict.add_argument(
        "--block-rows",
        type=_positive_int,
        default=DEFAULT_BLOCK_ROWS,
        metavar="N",
        help=f"rows read and predicted at a time (default {DEFAULT_BLOCK_ROWS})",
    )
    predict.add_argument(
        "--keep",
        action="append",
        default=[],
        metavar="COLS",
        help=(
            "table columns of DATA to copy into OUT before the predictions, such as an ID, "
            "comma-separated (repeatable; CSV or Parquet in and out; CSV values are copied "
            "as written)"
        ),
    )
    predict.add_argument("--x-key", default="X", help="features array in an .npz (default X)")
    predict.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bar and no summary line"
    )


def _run_predict(args: argparse.Namespace) -> int:
    """Run ``dtjit predict``: stream DATA through the model into OUT."""
    from tqdm import tqdm

    from ._category_encoding import CategoryCodes, map_values_predict
    from ._datafiles import (
        OUTPUT_CSV_COMPRESSIONS,
        OUTPUT_FORMATS,
        FeatureBlocks,
        check_input_file,
        check_output_dir,
        file_format,
        prediction_writer,
    )

    output_format = file_format(
        args.output, allowed=OUTPUT_FORMATS, compressions=OUTPUT_CSV_COMPRESSIONS
    )
    keep = _column_list(args.keep)
    if keep and output_format == "npy":
        raise ValueError("--keep needs a table output (.csv or .parquet), not .npy.")
    check_output_dir(args.output, inputs=(args.data, args.model))
    model = _load_model(args.model)
    is_classifier = hasattr(model, "classes_")
    if args.proba and not is_classifier:
        raise ValueError(f"--proba needs a classifier; {args.model} holds a regressor.")
    check_input_file(args.data, "DATA")
    # Categorical columns fitted on text (or pandas categories) are mapped to the model's
    # codes block by block, as predict maps a DataFrame; an unseen value goes where NaN goes.
    columns = model._categorical_columns()
    value_columns = (
        []
        if columns is None
        else [
            int(f)
            for f, mapped in zip(columns.features, columns.from_values, strict=True)
            if mapped
        ]
    )
    blocks = FeatureBlocks(
        args.data,
        n_features=model.n_features_in_,
        feature_names=getattr(model, "feature_names_in_", None),
        block_rows=args.block_rows,
        x_key=args.x_key,
        value_columns=value_columns,
        encode=partial(map_values_predict, columns=columns) if value_columns else None,
        keep=keep,
    )
    if args.proba:
        columns, dtype = [str(c) for c in model.classes_], np.dtype(np.float64)
        predict = model.predict_proba
    else:
        columns, dtype = ["prediction"], _label_dtype(model)
        predict = model.predict
    clashing = [c for c in keep if c in columns]
    if clashing:
        raise ValueError(
            f"--keep {','.join(clashing)}: OUT already has a prediction column of that name."
        )
    # A CSV's row count is unknown until it is read: its bar counts the file's bytes (the
    # compressed ones for .csv.gz), which gives a total and an ETA from the start.
    by_bytes = blocks.n_rows is None
    progress = tqdm(
        total=blocks.n_bytes if by_bytes else blocks.n_rows,
        unit="B" if by_bytes else " rows",
        unit_scale=True,
        unit_divisor=1024 if by_bytes else 1000,
        desc="dtjit predict",
        file=sys.stderr,
        disable=args.quiet or not sys.stderr.isatty(),
    )
    n_rows = 0
    start = time.perf_counter()
    writer = prediction_writer(args.output, columns, dtype, kept=blocks.kept_fields())
    with warnings.catch_warnings(), progress, writer as write:
        # Columns were matched to feature_names_in_ by name above; blocks reach the model as
        # plain arrays, for which scikit-learn would warn once per block.
        warnings.filterwarnings("ignore", message="X does not have valid feature names")
        for block, kept in blocks.with_kept():
            if len(block):  # a header-only CSV yields one empty chunk
                write(predict(block.view(CategoryCodes) if value_columns else block), kept)
            n_rows += len(block)
            progress.update(blocks.bytes_read - progress.n if by_bytes else len(block))
    if not args.quiet:
        seconds = time.perf_counter() - start
        print(f"predicted {n_rows} rows of {args.data} in {seconds:.2f} s, wrote {args.output}")
    return EXIT_OK


def _label_dtype(model: Any) -> np.dtype:
    """Dtype of predicted values: the class labels' (strings as fixed width) or float64."""
    if not hasattr(model, "classes_"):
        return np.dtype(np.float64)
    classes = model.classes_
    return classes.astype(str).dtype if classes.dtype == object else classes.dtype


# -- show ------------------------------------------------------------------------------------
def _add_show(commands: Any, common: argparse.ArgumentParser) -> None:
    show = _add_command(
        commands,
        common,
        _run_show,
        "print a saved tree",
        (
            "Print a one-line summary of MODEL and the tree as indented text, if-then rules, "
            "Graphviz DOT or a Mermaid flowchart (the summary is a comment in DOT / Mermaid, "
            "so the output can be redirected to a file as it is)."
        ),
    )
    show.add_argument("model", metavar="MODEL", help="model file written by dtjit fit")
    show.add_argument("--format", choices=tuple(EXPORTERS), default="text")
    show.add_argument(
        "--max-depth",
        type=_positive_int,
        metavar="N",
        help="print nodes down to this depth (text, dot, mermaid; the exporter's default)",
    )
    show.add_argument(
        "--decimals",
        type=int_at_least(0),
        default=None,
        metavar="N",
        help="digits of thresholds and values (default: the format's own, as its exporter's; "
        "DOT rounds like scikit-learn's export_graphviz, without trailing zeros)",
    )


def _run_show(args: argparse.Namespace) -> int:
    """Run ``dtjit show``: a header line, then the tree in the chosen format."""
    from . import export

    name = EXPORTERS[args.format]
    exporter = getattr(export, name, None)  # looked up now: exporters arrive on other branches
    if exporter is None:
        raise ValueError(
            f"--format {args.format} needs dtjit.export.{name}, which this dtjit does not have."
        )
    kwargs: dict[str, Any] = {} if args.decimals is None else {"decimals": args.decimals}
    if args.max_depth is not None:
        if args.format == "rules":
            raise ValueError("--max-depth does not apply to --format rules (rules end at leaves).")
        kwargs["max_depth"] = args.max_depth
    model = _load_model(args.model)
    if args.format in ("text", "rules"):
        # One node or rule per line: a name with a line break (a quoted CSV header cell, a
        # label) would split one. DOT and Mermaid escape their labels themselves.
        feature_names = _escaped_names(getattr(model, "feature_names_in_", None))
        if feature_names is not None:
            kwargs["feature_names"] = feature_names
        if getattr(model, "n_outputs_", 1) == 1:
            class_names = _escaped_names(getattr(model, "classes_", None))
            if class_names is not None:
                kwargs["class_names"] = class_names
    shown = exporter(model, **kwargs)
    text = "\n".join(shown) if isinstance(shown, list) else shown
    print(HEADER_COMMENT[args.format] + describe(model))
    print(text.rstrip("\n"))
    return EXIT_OK


# -- bench -----------------------------------------------------------------------------------
def _add_bench(commands: Any, common: argparse.ArgumentParser) -> None:
    from ._bench import DEFAULT_ROWS, MIN_ROWS

    bench = _add_command(
        commands,
        common,
        _run_bench,
        "compare with scikit-learn: accuracy, rules and speed",
        (
            "Fit dtjit and scikit-learn trees on the breast cancer data bundled with "
            "scikit-learn (accuracy, size, rules) and on a generated array (fit and predict "
            "times), and print the comparison."
        ),
    )
    bench.add_argument(
        "--rows",
        type=int_at_least(MIN_ROWS),
        default=DEFAULT_ROWS,
        metavar="N",
        help=f"rows of the generated array of the speed part (default {DEFAULT_ROWS:,})",
    )
    bench.add_argument(
        "--repeats",
        type=_positive_int,
        default=1,
        metavar="R",
        help="fits per estimator in the speed part; the median is shown (default 1)",
    )


def _run_bench(args: argparse.Namespace) -> int:
    """Run ``dtjit bench``."""
    from ._bench import run

    run(rows=args.rows, repeats=args.repeats)
    return EXIT_OK


# -- compile ---------------------------------------------------------------------------------
def _add_compile(commands: Any, common: argparse.ArgumentParser) -> None:
    from ._warmup import SPLITTERS

    command = _add_command(
        commands,
        common,
        _run_compile,
        "compile every fit and predict path now, into numba's on-disk cache",
        (
            "Run one small fit or predict per compiled path (each splitter, threads, "
            "categorical features, every criterion, multi-output y, more than 256 classes, "
            "pruning, MDLP), so numba "
            "compiles dtjit's kernels and caches them; later processes load them in well under "
            "a second. A cold cache takes minutes (3-5 on 2 cores); run it once after "
            "installing or while building an image. The cache is reused by the same dtjit "
            "files, numba version and CPU model."
        ),
    )
    command.add_argument(
        "--splitter",
        action="append",
        choices=SPLITTERS,
        metavar="NAME",
        help=(
            f"compile this splitter's paths ({', '.join(SPLITTERS)}); repeat for several "
            "(default all; 'best' is always included)"
        ),
    )
    command.add_argument(
        "--jobs",
        type=_positive_int,
        default=1,
        metavar="N",
        help=(
            "compile in N Python processes at once, one family of kernels each (the common "
            "fit, hist, categorical, criteria, multi-output), then check the cache here "
            "(default 1)"
        ),
    )
    command.add_argument("--only", type=_step_indices, help=argparse.SUPPRESS)


def _run_compile(args: argparse.Namespace) -> int:
    """Run ``dtjit compile``."""
    import numba

    from ._warmup import SPLITTERS, compile_kernels

    def show(name: str, seconds: float) -> None:
        print(f"{seconds:8.2f} s  {name}", flush=True)

    splitters = args.splitter or SPLITTERS
    if args.only is not None:  # one of the processes of --jobs: its steps only, no header
        compile_kernels(splitters, progress=show, only=args.only)
        return EXIT_OK
    cache = numba.config.CACHE_DIR or "next to the dtjit package (or numba's user cache)"
    print(f"numba cache: {cache}", flush=True)
    start = time.perf_counter()
    if args.jobs == 1:
        compile_kernels(splitters, progress=show)
    else:
        final = compile_kernels(splitters, n_processes=args.jobs)
        show("every step again in this process (cache check)", sum(final.values()))
    print(f"{time.perf_counter() - start:8.2f} s  in all")
    return EXIT_OK


def _step_indices(text: str) -> list[int]:
    try:
        indices = [int(part) for part in text.split(",")]
    except ValueError:
        message = f"expected step numbers separated by commas, got {text!r}"
        raise argparse.ArgumentTypeError(message) from None
    return indices  # compile_kernels checks that each names a step


# -- helpers ---------------------------------------------------------------------------------
def _load_model(path: str) -> Any:
    from . import load
    from ._datafiles import check_input_file

    check_input_file(path, "MODEL")
    model = load(path)
    if model.n_outputs_ != 1:
        raise ValueError(
            f"{path} holds a tree with {model.n_outputs_} outputs; the dtjit command handles "
            f"single-output models only (use the Python API for multi-output trees)."
        )
    return model


def _one_line(exc: BaseException) -> str:
    """Put the message on one line; unexpected exception types keep their name for context."""
    message = " ".join(str(exc).split())
    if isinstance(exc, (ValueError, TypeError, OSError)) and message:
        return message
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _positive_int(text: str) -> int:
    return int_at_least(1)(text)


def int_at_least(minimum: int) -> Callable[[str], int]:
    """Return an argparse ``type``: an integer of at least ``minimum``, else a usage error.

    Also used by the benchmark scripts, so their options fail the same way.
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


def _count_or_fraction(text: str) -> int | float:
    """``"5"`` -> 5 (a count), ``"0.1"`` -> 0.1 (a fraction); the estimator checks ranges."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _max_features(text: str) -> int | float | str:
    """Parse a count or a fraction; pass names on (the estimator validates them)."""
    try:
        return _count_or_fraction(text)
    except argparse.ArgumentTypeError:
        return text


def _class_weight(text: str) -> str:
    if text != "balanced":
        raise argparse.ArgumentTypeError(f"only 'balanced' is supported here, got {text!r}")
    return text


# fit's estimator options: flag (the parameter's name with dashes), parser, help
TREE_OPTIONS: tuple[tuple[str, Callable[[str], Any], str], ...] = (
    (
        "--criterion",
        str,
        "gini, entropy, log_loss, gain_ratio (classification); "
        "squared_error, poisson, absolute_error",
    ),
    ("--splitter", str, "best (exact), random, or hist (binned; see --max-bins)"),
    ("--max-bins", int, "bins per feature for --splitter hist (2..255, default 255)"),
    ("--max-depth", int, "maximum depth"),
    ("--min-samples-split", _count_or_fraction, "int, or a fraction of the rows"),
    ("--min-samples-leaf", _count_or_fraction, "int, or a fraction of the rows"),
    ("--min-weight-fraction-leaf", float, "fraction of the total weight"),
    ("--max-features", _max_features, "int, fraction, sqrt or log2"),
    ("--max-leaf-nodes", int, "grow best-first up to this many leaves"),
    ("--ccp-alpha", float, "cost-complexity pruning after growing (default 0: none)"),
    ("--min-impurity-decrease", float, "split only when impurity falls this much"),
    ("--class-weight", _class_weight, "balanced (classification only)"),
    ("--random-state", int, "seed for max_features sampling and --splitter random's thresholds"),
    ("--n-jobs", int, "threads for fitting (-1: all cores)"),
)
