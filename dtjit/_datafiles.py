"""The command line's data files: training tables, feature blocks in, predictions out.

Formats are chosen by file extension: CSV (optionally compressed, read with pandas), Parquet
(pyarrow), ``.npy`` and ``.npz`` (predicted block by block, never read whole: see
:class:`NpyRows`; training reads them whole). pandas and pyarrow are
imported inside the functions that need them, so importing this module costs nothing extra.
Every function raises ``ValueError`` / ``FileNotFoundError`` with a message naming the file
and the problem; the command line prints that message as it is.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from ._atomic import atomic_output

CSV_COMPRESSIONS = (".gz", ".bz2", ".xz", ".zst", ".zip")  # read through pandas
# pandas' names for them, for reading from an open file (whose bytes read give progress)
CSV_COMPRESSION_NAMES = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd", ".zip": "zip"}
# Predictions are written through the standard library's compressed streams: none for zstd
# before Python 3.14, and a zip archive would need a member name.
OUTPUT_CSV_COMPRESSIONS = (".gz", ".bz2", ".xz")
SUFFIX_FORMATS = {
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".npy": "npy",
    ".npz": "npz",
}
INPUT_FORMATS = ("csv", "parquet", "npy", "npz")
OUTPUT_FORMATS = ("csv", "parquet", "npy")
NUMERIC_KINDS = "biuf"  # bool, signed, unsigned, float
# Room for the header of any .npy we write: magic, version and length (10 bytes) plus the
# dict literal, padded with spaces like numpy pads its own. 128 keeps the data 64-byte aligned.
NPY_HEADER_BYTES = 128


def file_format(
    path: str | os.PathLike,
    allowed: Sequence[str] = INPUT_FORMATS,
    compressions: Sequence[str] = CSV_COMPRESSIONS,
) -> str:
    """Name the format of ``path`` from its extension.

    Parameters
    ----------
    path : str or path-like
        A file name; ``.csv`` may carry a compression suffix (``.csv.gz``, ``.csv.zst``, ...).
    allowed : sequence of str, default=INPUT_FORMATS
        The formats acceptable here.
    compressions : sequence of str, default=CSV_COMPRESSIONS
        The compression suffixes a ``.csv`` may carry here (:data:`OUTPUT_CSV_COMPRESSIONS`
        for predictions).

    Returns
    -------
    str
        One of ``"csv"``, ``"parquet"``, ``"npy"``, ``"npz"``.

    Raises
    ------
    ValueError
        If the extension is unknown or its format is not in ``allowed``.
    """
    name = os.path.basename(os.fspath(path)).lower()
    for compression in compressions:
        if name.endswith(".csv" + compression):
            name = name[: -len(compression)]
            break
    suffix = os.path.splitext(name)[1]
    fmt = SUFFIX_FORMATS.get(suffix)
    if fmt not in allowed:
        expected = ", ".join(s for s, f in SUFFIX_FORMATS.items() if f in allowed)
        if "csv" in allowed:
            expected += " (.csv also compressed: " + ", ".join(compressions) + ")"
        raise ValueError(
            f"{os.fspath(path)}: unsupported file type {suffix or '(no extension)'!r}; "
            f"expected {expected}."
        )
    return fmt


def require_pyarrow() -> Any:
    """Import and return ``pyarrow.parquet``, or explain how to install it."""
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ValueError(
            "Parquet files need the pyarrow package, which is not installed: pip install pyarrow"
        ) from exc
    return pq


def check_input_file(path: str | os.PathLike, what: str) -> None:
    """Raise ``FileNotFoundError`` naming ``what`` when ``path`` is not an existing file."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"{what} file not found: {os.fspath(path)}")
    if not os.path.isfile(path):
        raise ValueError(f"{what} is not a regular file: {os.fspath(path)}")


def check_output_dir(
    path: str | os.PathLike, inputs: Sequence[str | os.PathLike | None] = ()
) -> None:
    """Raise ``ValueError`` unless ``path``'s directory exists and is writable.

    Called before any long computation, so a typo in the output path fails at once. An
    output that is one of the command's ``inputs`` (the same file, by any name) is refused:
    writing it would destroy the data it was computed from.
    """
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise ValueError(f"output directory does not exist: {directory}")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise ValueError(f"output directory is not writable: {directory}")
    if os.path.isdir(path):
        raise ValueError(f"output path is a directory: {os.fspath(path)}")
    for source in inputs:
        if source is not None and os.path.isfile(path) and os.path.isfile(source):
            if os.path.samefile(path, source):
                raise ValueError(
                    f"output {os.fspath(path)} is the input file {os.fspath(source)}; writing "
                    "it would destroy that input: choose another output name."
                )


# -- training data ---------------------------------------------------------------------------
@dataclass
class TrainingData:
    """Features and target read from one data file (plus, optionally, a target file)."""

    X: Any  # pandas.DataFrame (named columns) or 2-D ndarray
    y: np.ndarray
    target_name: str | None


def read_training_data(
    path: str | os.PathLike,
    *,
    target: str | None = None,
    target_file: str | os.PathLike | None = None,
    drop: Sequence[str] = (),
    x_key: str = "X",
    y_key: str = "y",
    categorical: Sequence[str] = (),
) -> TrainingData:
    """Read a training set: a table with a target column, or arrays.

    Parameters
    ----------
    path : str or path-like
        CSV / Parquet table, ``.npy`` 2-D array or ``.npz`` archive.
    target : str, default=None
        Tables: the target column's name. Arrays: the target column's integer index in the
        feature array (negative counts from the end); it is removed from the features.
    target_file : str or path-like, default=None
        An ``.npy`` file holding the target (one value per row), instead of ``target``.
    drop : sequence of str, default=()
        Table columns to leave out of the features (tables only).
    x_key, y_key : str, default="X", "y"
        Array names inside an ``.npz``; ``y_key`` is used when neither ``target`` nor
        ``target_file`` is given.
    categorical : sequence of str, default=()
        Table columns that are categorical: they may hold text (the estimator maps it).

    Returns
    -------
    TrainingData
        ``X`` is a DataFrame for tables (so the estimator records the column names) and an
        ndarray for arrays.

    Raises
    ------
    ValueError
        Missing target, unknown column, non-numeric feature columns, unreadable file.
    """
    check_input_file(path, "DATA")
    if target is not None and target_file is not None:
        raise ValueError("give the target either as --target or as --target-file, not both.")
    fmt = file_format(path)
    if fmt in ("csv", "parquet"):
        return _training_table(path, fmt, target, target_file, drop, categorical)
    if drop:
        raise ValueError("--drop names table columns; it does not apply to .npy / .npz arrays.")
    if fmt == "npy":
        X = _load_array(path, mmap_mode="r")
        y = None
    else:
        arrays = _load_npz(path, x_key, y_key if target is None and target_file is None else None)
        X, y = arrays[x_key], arrays.get(y_key)
    _check_numeric_matrix(X, path)
    if target is not None:
        column = _column_index(target, X.shape[1], path)
        y = np.asarray(X[:, column])
        X = np.delete(X, column, axis=1)
    elif target_file is not None:
        y = _read_target_file(target_file, X.shape[0])
    elif y is None:
        raise ValueError(
            f"{os.fspath(path)}: no target given; use --target COLUMN_INDEX or --target-file y.npy."
        )
    else:
        y = _as_target(y, X.shape[0], f"{os.fspath(path)}[{y_key!r}]")
    if X.shape[1] == 0:
        raise ValueError(f"{os.fspath(path)}: no feature columns left besides the target.")
    return TrainingData(X=np.asarray(X), y=y, target_name=None)


def _training_table(path, fmt, target, target_file, drop, categorical=()) -> TrainingData:
    table = _read_table(path, fmt)
    if len(table) == 0:  # before the column checks: a header-only CSV's columns have no type
        raise ValueError(f"{os.fspath(path)}: no rows to fit on.")
    columns = [str(c) for c in table.columns]
    table.columns = columns
    unknown = [c for c in drop if c not in columns]
    if unknown:
        raise ValueError(f"--drop: no column {_listing(unknown)} in {os.fspath(path)}.")
    if target_file is not None:
        y = _read_target_file(target_file, len(table))
        target_name = None
        features = table.drop(columns=list(drop))
    else:
        if target is None:
            raise ValueError("fitting on a table needs --target COLUMN (or --target-file y.npy).")
        if target not in columns:
            raise ValueError(
                f"target column {target!r} not found in {os.fspath(path)}; "
                f"its columns are: {_listing(columns)}."
            )
        if target in drop:
            raise ValueError(f"column {target!r} is both the target and dropped.")
        y = table[target].to_numpy()
        _check_target_kind(y, f"{os.fspath(path)}[{target!r}]")
        target_name = target
        features = table.drop(columns=[target, *drop])
    unknown = [c for c in categorical if c not in features.columns]
    if unknown:
        raise ValueError(
            f"--categorical: no feature column {_listing(unknown)} in {os.fspath(path)}."
        )
    non_numeric = [c for c in _non_numeric_columns(features) if c not in categorical]
    if non_numeric:
        listed = ",".join(non_numeric)
        raise ValueError(
            f"{os.fspath(path)}: non-numeric feature column(s) {_listing(non_numeric)}; "
            f"declare them with --categorical {listed} or leave them out with --drop."
        )
    if features.shape[1] == 0:
        raise ValueError(f"{os.fspath(path)}: no feature columns left besides the target.")
    return TrainingData(X=features, y=y, target_name=target_name)


def _read_table(path, fmt) -> Any:
    import pandas as pd

    if fmt == "parquet":
        require_pyarrow()
    try:
        if fmt == "csv":
            names = _raw_csv_header(path)
            table = pd.read_csv(path)
        else:
            table = pd.read_parquet(path, engine="pyarrow")
            names = [str(c) for c in table.columns]
    except Exception as exc:  # parsers raise many types (UnicodeDecodeError, ArrowInvalid, ...)
        raise ValueError(f"cannot read {os.fspath(path)} as {fmt.upper()}: {exc}") from exc
    _check_unique_names(names, path)
    return table


def _raw_csv_header(path) -> list[str]:
    """Return a CSV's header row as written (``read_csv`` renames a repeated ``a`` to ``a.1``)."""
    import pandas as pd

    row = pd.read_csv(path, header=None, nrows=1, dtype=str, keep_default_na=False)
    return [str(name) for name in row.iloc[0]] if len(row) else []


def _check_unique_names(names: Sequence[str], path) -> None:
    """Raise ``ValueError`` naming the column names ``path`` repeats, if any.

    Empty names are not compared: pandas names each ``Unnamed: <position>``.
    """
    seen: set[str] = set()
    repeated = list(dict.fromkeys(n for n in names if n and (n in seen or seen.add(n))))
    if repeated:
        raise ValueError(
            f"{os.fspath(path)} has repeated column names: {_listing(repeated)}; a column "
            "could not be told from its namesake."
        )


def _read_target_file(path, n_rows: int) -> np.ndarray:
    check_input_file(path, "target")
    file_format(path, allowed=("npy",))  # raises for anything but .npy
    return _as_target(_load_array(path), n_rows, os.fspath(path))


def _as_target(y: np.ndarray, n_rows: int, where: str) -> np.ndarray:
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"{where}: the target must be 1-D, got shape {y.shape}.")
    if y.shape[0] != n_rows:
        raise ValueError(f"{where}: the target has {y.shape[0]} values for {n_rows} rows.")
    _check_target_kind(y, where)
    return np.asarray(y)


def _check_target_kind(y: np.ndarray, where: str) -> None:
    """Refuse a target of complex, structured or date/time values (numpy would convert them)."""
    if y.dtype.kind not in "biufOUS":
        raise ValueError(
            f"{where}: the target has dtype {y.dtype}; expected numbers, booleans or text."
        )


def _column_index(target: str, n_columns: int, path) -> int:
    try:
        column = int(target)
    except ValueError:
        raise ValueError(
            f"{os.fspath(path)} has no column names: --target must be a column index, "
            f"got {target!r}."
        ) from None
    if not -n_columns <= column < n_columns:
        raise ValueError(
            f"--target {column} is out of range for {os.fspath(path)}'s {n_columns} columns."
        )
    return column % n_columns


# -- feature blocks for prediction -----------------------------------------------------------
class FeatureBlocks:
    """The feature columns of a data file, delivered as 2-D numeric arrays of bounded size.

    Opening checks everything that can be checked before predicting (the file, its format,
    column names or count against the model), so errors come before any output is created.

    Parameters
    ----------
    path : str or path-like
        CSV / Parquet table (with a header row), ``.npy`` 2-D array or ``.npz`` archive (its
        ``x_key`` array); arrays are read block by block with :class:`NpyRows`.
    n_features : int
        Number of features the model expects.
    feature_names : sequence of str or None
        The model's ``feature_names_in_``. With a table, these columns are selected by name
        and in this order (other columns, such as the target, are ignored). Without names, a
        table must have exactly ``n_features`` columns, used in file order.
    block_rows : int
        Rows per block.
    x_key : str, default="X"
        Array name inside an ``.npz``.
    value_columns : sequence of int, default=()
        Positions (in model order) of the table columns holding category values, such as
        text, that ``encode`` turns into codes. A CSV reads them as text, so that a block
        whose values all look like numbers is not parsed differently from the others.
    encode : callable or None, default=None
        Applied to each table block (a DataFrame of the model's columns, in model order)
        before it becomes numeric: the model's mapping of category values to codes.
    keep : sequence of str, default=()
        Table columns delivered beside each block by :meth:`with_kept` (an ID column to
        carry into the predictions). A CSV reads them as text, so values are copied as
        written (``007`` stays ``007``), except those that are also numeric features.

    Attributes
    ----------
    n_rows : int or None
        Rows in the file, or ``None`` when unknown before reading (CSV).
    n_bytes : int
        Size of the file.
    bytes_read : int
        Bytes of the file read so far (CSV; the compressed bytes of a compressed CSV),
        for a progress bar with a total.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        n_features: int,
        feature_names: Sequence[str] | None,
        block_rows: int,
        x_key: str = "X",
        value_columns: Sequence[int] = (),
        encode: Callable[[Any], Any] | None = None,
        keep: Sequence[str] = (),
    ) -> None:
        check_input_file(path, "DATA")
        self.path = path
        self.format = file_format(path)
        self.block_rows = block_rows
        self.n_rows: int | None = None
        self.n_bytes = os.path.getsize(path)
        self.bytes_read = 0
        self._keep = list(dict.fromkeys(keep))
        if self._keep and self.format not in ("csv", "parquet"):
            raise ValueError("--keep names table columns; it does not apply to .npy / .npz input.")
        self._columns: list[str] | None = None  # table columns to read, in model order
        self._array: NpyRows | None = None
        self._encode = encode
        self._text_dtypes: dict[str, type] = {}
        if self.format == "csv":
            header = self._csv_header()
            self._columns = self._select_columns(header, n_features, feature_names)
            self._check_kept(header)
            self._text_dtypes = {self._columns[int(j)]: str for j in value_columns}
            self._text_dtypes.update({c: str for c in self._keep if c not in self._columns})
        elif self.format == "parquet":
            parquet = require_pyarrow().ParquetFile
            try:
                self._parquet = parquet(path)
            except Exception as exc:
                raise ValueError(f"cannot read {os.fspath(path)} as Parquet: {exc}") from exc
            header = [str(n) for n in self._parquet.schema_arrow.names]
            _check_unique_names(header, path)
            self._columns = self._select_columns(header, n_features, feature_names)
            self._check_kept(header)
            self.n_rows = self._parquet.metadata.num_rows
        else:
            self._array = NpyRows(path, x_key if self.format == "npz" else None)
            if self._array.shape[1] != n_features:
                raise ValueError(
                    f"{os.fspath(path)} has {self._array.shape[1]} feature columns; "
                    f"the model expects {n_features}."
                )
            self.n_rows = self._array.shape[0]

    def __iter__(self) -> Iterator[np.ndarray]:
        """Yield the rows in order, ``block_rows`` at a time (the last block may be shorter)."""
        for block, _ in self.with_kept():
            yield block

    def with_kept(self) -> Iterator[tuple[np.ndarray, Any]]:
        """Yield ``(block, kept)``: each block with a DataFrame of its ``keep`` columns.

        ``kept`` is ``None`` when no column is kept.
        """
        if self._array is not None:
            for block in self._array.blocks(self.block_rows):
                yield block, None
        elif self.format == "csv":
            import pandas as pd

            compression = os.path.splitext(os.fspath(self.path))[1].lower()
            with open(self.path, "rb") as f:
                # Every column is read (the model's are selected per block): with usecols,
                # pandas no longer checks the field count, and a row with an extra field
                # lost it silently (fit, reading whole rows, refused the same file).
                chunks = pd.read_csv(
                    f,
                    chunksize=self.block_rows,
                    dtype=self._text_dtypes or None,
                    compression=CSV_COMPRESSION_NAMES.get(compression),
                )
                for frame in self._reading(chunks):
                    self.bytes_read = f.tell()
                    yield self._numeric_block(frame), self._kept(frame)
        else:
            columns = self._columns + [c for c in self._keep if c not in self._columns]
            batches = self._parquet.iter_batches(batch_size=self.block_rows, columns=columns)
            for batch in self._reading(batches):
                frame = batch.to_pandas()
                yield self._numeric_block(frame), self._kept(frame)

    def kept_fields(self) -> list[tuple[str, Any]] | None:
        """Return the kept columns as ``(name, pyarrow type)`` for a Parquet output, or None.

        Known before reading, so that the output's schema is fixed even for no rows: a
        Parquet input's own types; from a CSV, text, or float64 for a numeric feature.
        """
        if not self._keep:
            return None
        import pyarrow as pa

        if self.format == "parquet":
            schema = self._parquet.schema_arrow
            return [(c, schema.field(c).type) for c in self._keep]
        return [(c, pa.string() if c in self._text_dtypes else pa.float64()) for c in self._keep]

    def _kept(self, frame: Any) -> Any:
        return frame[self._keep].reset_index(drop=True) if self._keep else None

    def _check_kept(self, header: list[str]) -> None:
        missing = [c for c in self._keep if c not in header]
        if missing:
            raise ValueError(f"--keep: no column {_listing(missing)} in {os.fspath(self.path)}.")

    def _reading(self, chunks: Iterator[Any]) -> Iterator[Any]:
        """Pass ``chunks`` through, turning parser failures into one clear error."""
        try:
            yield from chunks
        except (ValueError, OSError, UnicodeDecodeError) as exc:
            raise ValueError(
                f"cannot read {os.fspath(self.path)} as {self.format.upper()}: {exc}"
            ) from exc

    def _csv_header(self) -> list[str]:
        import pandas as pd

        try:
            header = [str(c) for c in pd.read_csv(self.path, nrows=0).columns]
            raw = _raw_csv_header(self.path)
        except Exception as exc:  # parsers raise many types (UnicodeDecodeError, ParserError)
            raise ValueError(f"cannot read {os.fspath(self.path)} as CSV: {exc}") from exc
        _check_unique_names(raw, self.path)
        return header

    def _select_columns(
        self, header: list[str], n_features: int, feature_names: Sequence[str] | None
    ) -> list[str]:
        if feature_names is None:
            if len(header) != n_features:
                raise ValueError(
                    f"{os.fspath(self.path)} has {len(header)} columns; the model expects "
                    f"{n_features} features and has no feature names to select columns by."
                )
            if len(set(header)) != len(header):
                raise ValueError(f"{os.fspath(self.path)} has repeated column names.")
            return header
        names = [str(n) for n in feature_names]
        missing = [n for n in names if n not in header]
        if missing:
            raise ValueError(
                f"{os.fspath(self.path)} lacks the model's feature column(s) {_listing(missing)}."
            )
        return names

    def _numeric_block(self, frame: Any) -> np.ndarray:
        frame = frame[self._columns]  # file order -> model order
        if frame.empty:  # a header-only CSV reads as columns of dtype object, but no values
            return np.empty((0, len(self._columns)))
        if self._encode is not None:
            frame = self._encode(frame)
        non_numeric = _non_numeric_columns(frame)
        if non_numeric:
            raise ValueError(
                f"{os.fspath(self.path)}: non-numeric values in feature column(s) "
                f"{_listing(non_numeric)}."
            )
        return frame.to_numpy()


class NpyRows:
    """The rows of a 2-D array stored in an ``.npy`` file (or an ``.npz`` member), read in blocks.

    Each block is read into a new array with ``readinto``: no memory map, so the process
    holds one block of the file at a time whatever its layout. A memory map's pages count
    as resident once touched and stay so until released or unmapped; slices of
    ``np.load(mmap_mode="r")`` whose pages were not released (row blocks of a
    Fortran-ordered file, for one) grew the resident set to the size of the file.

    Parameters
    ----------
    path : str or path-like
        The ``.npy`` file, or the ``.npz`` archive holding ``member``.
    member : str or None, default=None
        Array name inside an ``.npz``; ``None`` for an ``.npy`` file.

    Attributes
    ----------
    shape : tuple of int
        ``(n_rows, n_columns)``.
    dtype : numpy.dtype
        The stored dtype (byte order included); blocks have this dtype.
    fortran_order : bool
        Whether columns are stored one after the other. Such a file is read column by
        column within each block (a compressed ``.npz`` member is then read whole: it
        cannot be read from an offset without decompressing what comes before).

    Raises
    ------
    ValueError
        Unreadable header, not a numeric 2-D array, or a file shorter than its header says.
    """

    def __init__(self, path: str | os.PathLike, member: str | None = None) -> None:
        self.path = path
        self.member = member
        with self._open() as f:
            try:
                version = np.lib.format.read_magic(f)
                read_header = {
                    (1, 0): np.lib.format.read_array_header_1_0,
                    (2, 0): np.lib.format.read_array_header_2_0,
                }.get(version)
                if read_header is None:
                    raise ValueError(f"unsupported .npy format version {version}")
                shape, self.fortran_order, self.dtype = read_header(f)
            except Exception as exc:  # numpy raises ValueError / OSError / EOFError on bad files
                raise ValueError(f"cannot read {self._where()} as .npy: {exc}") from exc
            self._offset = f.tell()
        self.shape = tuple(shape)
        if len(self.shape) != 2:
            raise ValueError(f"{self._where()}: features must be a 2-D array, got shape {shape}.")
        if self.dtype.kind not in NUMERIC_KINDS:
            raise ValueError(f"{self._where()}: features must be numeric, got dtype {self.dtype}.")
        if member is None:
            stored = os.path.getsize(path) - self._offset
            expected = self.shape[0] * self.shape[1] * self.dtype.itemsize
            if stored < expected:
                raise ValueError(
                    f"{self._where()} is truncated: its header announces {expected} bytes of "
                    f"data, the file holds {stored}."
                )

    def _where(self) -> str:
        return os.fspath(self.path) + (f"[{self.member!r}]" if self.member else "")

    @contextmanager
    def _open(self) -> Iterator[Any]:
        """Open the raw array stream (unbuffered for a file, so reads go straight to blocks)."""
        if self.member is None:
            with open(self.path, "rb", buffering=0) as f:
                yield f
            return
        import zipfile

        try:
            archive = zipfile.ZipFile(self.path)
        except Exception as exc:
            raise ValueError(f"cannot read {os.fspath(self.path)} as .npz: {exc}") from exc
        with archive:
            names = [n.removesuffix(".npy") for n in archive.namelist()]
            if self.member not in names:
                raise ValueError(
                    f"{os.fspath(self.path)} has no array {self.member!r}; its arrays are: "
                    f"{_listing(names)} (choose with --x-key)."
                )
            with archive.open(self.member + ".npy") as f:
                yield f

    def blocks(self, block_rows: int) -> Iterator[np.ndarray]:
        """Yield the rows in order, ``block_rows`` at a time, each block a new array."""
        n_rows, n_columns = self.shape
        order = "F" if self.fortran_order else "C"
        with self._open() as f:
            if self.fortran_order and self.member is not None:  # no random access: read whole
                f.seek(self._offset)
                whole = np.empty(self.shape, self.dtype, order="F")
                self._fill(f, whole)
                for start in range(0, n_rows, block_rows):
                    yield whole[start : start + block_rows]
                return
            f.seek(self._offset)
            for start in range(0, n_rows, block_rows):
                block = np.empty((min(block_rows, n_rows - start), n_columns), self.dtype, order)
                if not self.fortran_order:  # rows follow each other: one sequential read
                    self._fill(f, block)
                else:  # column j of rows [start, stop) is contiguous at its own offset
                    column_bytes = n_rows * self.dtype.itemsize
                    for j in range(n_columns):
                        f.seek(self._offset + j * column_bytes + start * self.dtype.itemsize)
                        self._fill(f, block[:, j])
                yield block

    def _fill(self, f: Any, out: np.ndarray) -> None:
        """Read exactly ``out.nbytes`` bytes from ``f`` into the contiguous array ``out``."""
        view = memoryview(out.reshape(-1, order="A").view(np.uint8))  # any byte order
        done = 0
        while done < len(view):
            n = f.readinto(view[done:])
            if not n:
                raise ValueError(f"{self._where()} ends before the data its header announces.")
            done += n


# -- predictions out -------------------------------------------------------------------------
@contextmanager
def prediction_writer(
    path: str | os.PathLike,
    columns: Sequence[str],
    dtype: np.dtype,
    kept: Sequence[tuple[str, Any]] | None = None,
) -> Iterator[Callable[..., None]]:
    """Open ``path`` for predictions; yield a function that appends one block of rows.

    The file is written under a temporary name in the same directory and renamed into place
    only when the ``with`` block ends without an exception, so a failure (or Ctrl-C) never
    leaves a partial file. The format follows the extension: CSV and Parquet get one column
    per name in ``columns``; ``.npy`` gets a 1-D array for one column, else 2-D.

    Parameters
    ----------
    path : str or path-like
        Destination: ``.csv``, ``.parquet`` / ``.pq`` or ``.npy``.
    columns : sequence of str
        Column names.
    dtype : numpy.dtype
        Dtype of every column (``<U..`` for string labels).
    kept : sequence of (str, pyarrow.DataType), default=None
        Columns copied from the input before the predictions (CSV and Parquet only), as
        :meth:`FeatureBlocks.kept_fields` names them.

    Yields
    ------
    callable
        ``write(block, kept=None)`` with ``block`` of shape ``(rows,)`` or
        ``(rows, len(columns))`` and ``kept`` a DataFrame of the kept columns' rows.
    """
    fmt = file_format(path, allowed=OUTPUT_FORMATS, compressions=OUTPUT_CSV_COMPRESSIONS)
    if kept and fmt == "npy":
        raise ValueError(f"{os.fspath(path)}: kept columns need a CSV or Parquet output.")
    writer = _WRITERS[fmt]
    if fmt == "csv":
        writer = partial(_csv_writer, compression=os.path.splitext(os.fspath(path))[1].lower())
    with (
        atomic_output(path) as tmp,
        writer(tmp, list(columns), np.dtype(dtype), list(kept or [])) as write,
    ):
        yield write


@contextmanager
def _csv_writer(
    tmp: str,
    columns: list[str],
    dtype: np.dtype,
    kept: list[tuple[str, Any]],
    compression: str = ".csv",
) -> Iterator[Callable]:
    """CSV, compressed when ``compression`` (the destination's last suffix) is one of ours."""
    import bz2
    import gzip
    import lzma

    import pandas as pd

    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(compression, open)
    with opener(tmp, "wt", newline="", encoding="utf-8") as f:
        header = [name for name, _ in kept] + columns
        pd.DataFrame(columns=header).to_csv(f, index=False)  # the header, even for no rows

        def write(block: np.ndarray, kept_rows: Any = None) -> None:
            frame = pd.DataFrame(block.reshape(len(block), len(columns)), columns=columns)
            if kept_rows is not None:
                frame = pd.concat([kept_rows, frame], axis=1)
            frame.to_csv(f, header=False, index=False)

        yield write


@contextmanager
def _parquet_writer(
    tmp: str, columns: list[str], dtype: np.dtype, kept: list[tuple[str, Any]]
) -> Iterator[Callable]:
    pq = require_pyarrow()
    import pyarrow as pa

    arrow_type = pa.string() if dtype.kind in "UO" else pa.from_numpy_dtype(dtype)
    schema = pa.schema(kept + [(name, arrow_type) for name in columns])
    with pq.ParquetWriter(tmp, schema) as parquet:

        def write(block: np.ndarray, kept_rows: Any = None) -> None:
            block = block.reshape(len(block), len(columns))
            arrays = [pa.array(kept_rows[name], type=kind, from_pandas=True) for name, kind in kept]
            arrays += [pa.array(block[:, j], type=arrow_type) for j in range(len(columns))]
            parquet.write_table(pa.Table.from_arrays(arrays, schema=schema))

        yield write


@contextmanager
def _npy_writer(
    tmp: str, columns: list[str], dtype: np.dtype, kept: list[tuple[str, Any]]
) -> Iterator[Callable]:
    """Append raw rows after a reserved header; write the header once the row count is known.

    A CSV input's row count is unknown until it has been read, so the shape cannot be fixed
    up front (as ``np.lib.format.open_memmap`` needs); blocks are appended as they come and
    the header, padded to a fixed size, is written last. Memory stays one block.
    """
    n_rows = 0
    with open(tmp, "wb") as f:
        f.write(bytes(NPY_HEADER_BYTES))

        def write(block: np.ndarray, kept_rows: Any = None) -> None:
            nonlocal n_rows
            rows = np.ascontiguousarray(block, dtype=dtype).reshape(len(block), len(columns))
            f.write(rows.tobytes())
            n_rows += len(rows)

        yield write
        shape = (n_rows,) if len(columns) == 1 else (n_rows, len(columns))
        f.seek(0)
        f.write(_npy_header(dtype, shape))


def _npy_header(dtype: np.dtype, shape: tuple[int, ...]) -> bytes:
    """Build the ``.npy`` 1.0 header of a C-ordered array, exactly NPY_HEADER_BYTES long."""
    fields = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}
    prefix = np.lib.format.magic(1, 0)
    text_bytes = NPY_HEADER_BYTES - len(prefix) - 2  # 2: the little-endian uint16 length
    text = repr(fields)
    if len(text) >= text_bytes:  # pragma: no cover - a dict of ~80 characters at most
        raise ValueError(f"npy header too long: {text}")
    return prefix + struct.pack("<H", text_bytes) + (text.ljust(text_bytes - 1) + "\n").encode()


_WRITERS = {"csv": _csv_writer, "parquet": _parquet_writer, "npy": _npy_writer}


# -- shared checks ---------------------------------------------------------------------------
def _load_array(path, mmap_mode: str | None = None) -> np.ndarray:
    try:
        return np.load(path, mmap_mode=mmap_mode, allow_pickle=False)
    except Exception as exc:  # numpy raises ValueError, OSError, EOFError... on bad files
        raise ValueError(f"cannot read {os.fspath(path)} as .npy: {exc}") from exc


def _load_npz(path, x_key: str, y_key: str | None) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as archive:
            names = list(archive.files)
            wanted = [k for k in (x_key, y_key) if k is not None]
            missing = [k for k in wanted if k not in names]
            if missing:
                raise LookupError(
                    f"{os.fspath(path)} has no array {_listing(missing)}; its arrays are: "
                    f"{_listing(names)} (choose with --x-key / --y-key)."
                )
            return {k: archive[k] for k in wanted}
    except LookupError as exc:
        raise ValueError(str(exc)) from None
    except Exception as exc:  # zipfile and numpy raise many types on bad files
        raise ValueError(f"cannot read {os.fspath(path)} as .npz: {exc}") from exc


def _check_numeric_matrix(X: np.ndarray, path) -> None:
    if X.ndim != 2:
        raise ValueError(f"{os.fspath(path)}: features must be a 2-D array, got shape {X.shape}.")
    if X.dtype.kind not in NUMERIC_KINDS:
        raise ValueError(f"{os.fspath(path)}: features must be numeric, got dtype {X.dtype}.")


def _non_numeric_columns(frame: Any) -> list[str]:
    from pandas.api.types import is_numeric_dtype

    return [str(c) for c in frame.columns if not is_numeric_dtype(frame[c].dtype)]


def _listing(names: Sequence[str]) -> str:
    return ", ".join(repr(n) for n in names)
