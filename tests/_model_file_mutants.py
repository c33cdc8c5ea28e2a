"""Mutants of real model files, and the plain Python walk that judges the ones that load.

Shared by the fuzz test (tests/test_model_file_fuzz.py) and the child processes it starts:
``mutant(base, seed)`` is deterministic, so a child rebuilds mutant ``seed`` from the base
file's bytes instead of the parent writing thousands of files, and a failure is replayed
with the same two arguments.
"""

from __future__ import annotations

import io
import json
import math
import zipfile

import numpy as np

KINDS = ("array", "header", "bytes", "truncate", "nesting")
# Integers and floats that sit on or next to every boundary a check could get wrong.
SPECIAL_INTS = (
    -(2**63), -(2**31), -3, -2, -1, 0, 1, 2, 3, 63, 64, 4095, 4096, 2**31 - 1, 2**63 - 1
)  # fmt: skip
SPECIAL_FLOATS = (math.nan, math.inf, -math.inf, 0.0, -0.0, 0.5, 1.0, 2.0, -1.0, 1e-300, 1e300)
RAW = "\u0000raw\u0000"  # placeholder replaced by raw JSON text after json.dumps


def read_members(raw: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    """Split a model file's bytes into its header (parsed) and its other arrays."""
    with np.load(io.BytesIO(raw), allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    header = json.loads(arrays.pop("header").tobytes().decode("utf-8"))
    return header, arrays


def write_members(header_text: str | bytes, arrays: dict[str, np.ndarray]) -> bytes:
    """An uncompressed ``.npz`` (as ``dtjit.save`` writes) holding ``header_text`` and arrays."""
    if isinstance(header_text, str):
        header_text = header_text.encode("utf-8")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as archive:
        for name, a in {"header": np.frombuffer(header_text, np.uint8), **arrays}.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, np.asarray(a), allow_pickle=False)
            archive.writestr(name + ".npy", member.getvalue())
    return buf.getvalue()


def mutant(base: bytes, seed: int) -> tuple[str, bytes]:
    """Return ``(description, file bytes)`` of mutant ``seed`` of the model file ``base``."""
    rng = np.random.default_rng(seed)
    kind = KINDS[seed % len(KINDS)]
    if kind == "bytes" and seed % 2:  # inside one member, the archive's checksums kept valid
        return _flip_member_bytes(rng, base)
    if kind == "bytes":
        b = bytearray(base)
        spots = rng.integers(0, len(b), size=int(rng.integers(1, 4)))
        for spot in spots:
            b[spot] = int(rng.integers(256))
        return f"bytes: flipped at {sorted(int(s) for s in spots)}", bytes(b)
    if kind == "truncate":
        cut = int(rng.integers(0, len(base)))
        return f"truncate: first {cut} of {len(base)} bytes", base[:cut]
    header, arrays = read_members(base)
    if kind == "array":
        what = _mutate_array(rng, arrays)
        return f"array: {what}", write_members(json.dumps(header), arrays)
    if kind == "nesting":
        depth = int(rng.choice([17, 100, 900, 1200, 100_000]))
        path, raw = _random_path(rng, header), "[" * depth + "]" * depth
        what = f"nesting: {'.'.join(map(str, path)) or 'header'} nested {depth} deep"
        if not path:  # the whole header
            return what, write_members(raw, arrays)
        _set(header, path, RAW)
        return what, write_members(json.dumps(header).replace(json.dumps(RAW), raw), arrays)
    what, text = _mutate_header(rng, header)
    return f"header: {what}", write_members(text, arrays)


def _flip_member_bytes(rng: np.random.Generator, base: bytes) -> tuple[str, bytes]:
    """Flip 1-3 bytes of one member's ``.npy`` bytes (its header or its data) and re-zip."""
    with zipfile.ZipFile(io.BytesIO(base)) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    name = sorted(members)[int(rng.integers(len(members)))]
    b = bytearray(members[name])
    spots = rng.integers(0, len(b), size=int(rng.integers(1, 4)))
    for spot in spots:
        b[spot] = int(rng.integers(256))
    members[name] = bytes(b)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as archive:
        for member, data in members.items():
            archive.writestr(member, data)
    return f"bytes: {name} flipped at {sorted(int(s) for s in spots)}", buf.getvalue()


def _mutate_array(rng: np.random.Generator, arrays: dict[str, np.ndarray]) -> str:
    """Edit one member in place (values, shape, dtype, or its absence); say what was done."""
    name = str(rng.choice(sorted(arrays)))
    a = arrays[name]
    action = rng.choice(["values", "values", "values", "shape", "dtype", "drop", "swap"])
    if action == "drop":
        del arrays[name]
        return f"{name} removed"
    if action == "dtype":
        to = rng.choice(["int32", "int64", "uint8", "float64", "float32", "uint64", "<U3",
                         "complex128", "datetime64[s]", "V8", "bool", ">i4"])  # fmt: skip
        try:
            arrays[name] = a.astype(to)
        except (TypeError, ValueError):
            arrays[name] = np.zeros(a.shape, dtype=to)
        return f"{name} as {to}"
    if action == "shape":
        how = rng.choice(["shorter", "longer", "empty", "2-D", "flat"])
        if how == "shorter":
            arrays[name] = a[: max(0, len(a) - int(rng.integers(1, 3)))]
        elif how == "longer":
            arrays[name] = np.concatenate([a, a[: int(rng.integers(1, 3))]])
        elif how == "empty":
            arrays[name] = a[:0]
        elif how == "2-D":
            arrays[name] = a[:, None]
        else:
            arrays[name] = a.reshape(-1)
        return f"{name} {how}"
    a = a.copy()
    flat = a.reshape(-1)
    if flat.size == 0:
        return f"{name} empty, unchanged"
    if action == "swap":
        i, j = rng.integers(0, flat.size, size=2)
        flat[i], flat[j] = flat[j], flat[i]
        arrays[name] = a
        return f"{name}[{i}] <-> [{j}]"
    n_edits = int(rng.integers(1, 4))
    spots = rng.integers(0, flat.size, size=n_edits)
    for i in spots:
        flat[i] = _special_value(rng, a.dtype, flat.size)
    if name == "weighted_n_node_samples" and rng.random() < 0.2:
        flat[:] = 0.0  # issue 52's all-zero weights
    arrays[name] = a
    return f"{name}[{sorted(int(s) for s in spots)}] = {flat[spots].tolist()!r}"


def _special_value(rng: np.random.Generator, dtype: np.dtype, n: int):
    kind = dtype.kind
    if kind in "iu":
        info = np.iinfo(dtype)
        pool = [v for v in (*SPECIAL_INTS, n - 1, n, n + 1) if info.min <= v <= info.max]
        return (
            pool[int(rng.integers(len(pool)))]
            if rng.random() < 0.8
            else rng.integers(max(info.min, -1000), min(info.max, 1000))
        )
    if kind == "f":
        return (
            SPECIAL_FLOATS[int(rng.integers(len(SPECIAL_FLOATS)))]
            if rng.random() < 0.7
            else rng.normal() * 10.0 ** int(rng.integers(-5, 6))
        )
    if kind == "b":
        return not rng.integers(2)
    if kind == "U":
        return str(rng.choice(["", "a", "zz", "0", "1", "setosa", "\u00e9"]))
    return 0


def _random_path(rng: np.random.Generator, header: dict) -> list:
    """A path of keys and indices from the header's root to some value in it."""
    path, node = [], header
    while isinstance(node, (dict, list)) and len(node) and (not path or rng.random() < 0.7):
        key = (
            sorted(node)[int(rng.integers(len(node)))]
            if isinstance(node, dict)
            else int(rng.integers(len(node)))
        )
        path.append(key)
        node = node[key]
    return path


def _set(header: dict, path: list, value) -> None:
    node = header
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


# (description, JSON text) pairs; the huge ones are raw text because json.dumps refuses them.
_HEADER_VALUES = [
    ("null", "null"), ("true", "true"), ("-1", "-1"), ("0", "0"), ("1", "1"),
    ("2**31-1", str(2**31 - 1)), ("2**63", str(2**63)), ("10**4000", "1" + "0" * 4000),
    ("5000 digits", "9" * 5000), ("1e308", "1e308"), ("NaN", "NaN"), ("-Infinity", "-Infinity"),
    ("1.5", "1.5"), ('"x"', '"x"'), ("[]", "[]"), ("{}", "{}"), ("[0, 0]", "[0, 0]"),
    ("10**5 zeros", "[" + ",".join(["0"] * 100_000) + "]"),
    ("10**5 names", "[" + ",".join(f'"c{i}"' for i in range(100_000)) + "]"),
    ("duplicates", '["a", "a"]'), ("1, true, 1.0", "[1, true, 1.0]"),
]  # fmt: skip


def _mutate_header(rng: np.random.Generator, header: dict) -> tuple[str, str]:
    """Replace, delete or add one header entry, or set a size field; return (what, text)."""
    action = rng.choice(["replace", "replace", "replace", "delete", "add", "size"])
    if action == "size":  # the fields that size later allocations, set to extreme values
        field = str(rng.choice(["n_features", "n_classes", "max_features_", "categorical"]))
        what, raw = _HEADER_VALUES[int(rng.integers(len(_HEADER_VALUES)))]
        if field == "categorical" and header.get("categorical", {}).get("features"):
            cats = header["categorical"]["categories"]
            cats[int(rng.integers(len(cats)))] = RAW
        elif field == "n_classes":
            header["n_classes"] = [RAW] * len(header["n_classes"])
        else:
            header[field] = RAW
        return f"{field} = {what}", json.dumps(header).replace(json.dumps(RAW), raw)
    path = _random_path(rng, header)
    if not path:
        return "unchanged", json.dumps(header)
    where = ".".join(map(str, path))
    if action == "delete":
        node = header
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
        return f"{where} deleted", json.dumps(header)
    if action == "add":
        node = header
        for key in path[:-1]:
            node = node[key]
        if isinstance(node, list):
            node.append(node[-1] if node else 0)
            return f"{where}: appended", json.dumps(header)
        node["unknown_key"] = 1
        return f"{where}: unknown key added", json.dumps(header)
    what, raw = _HEADER_VALUES[int(rng.integers(len(_HEADER_VALUES)))]
    _set(header, path, RAW)
    return f"{where} = {what}", json.dumps(header).replace(json.dumps(RAW), raw)


# ------------------------------------------------------------------ the judge of a loaded mutant
def walk(tree, row: np.ndarray) -> int:
    """The leaf ``row`` reaches, read from the tree's arrays by the documented rules."""
    node = 0
    n_words = tree.category_bits.shape[1]
    while tree.left[node] != -1:
        x = float(row[tree.feature[node]])
        k = int(tree.categorical_set[node])
        if math.isnan(x):
            go_left = bool(tree.missing_left[node])
        elif k >= 0:
            c = int(x)
            if 0 <= c < 64 * n_words:
                go_left = bool((int(tree.category_bits[k, c >> 6]) >> (c & 63)) & 1)
            else:
                go_left = bool(tree.missing_left[node])
        else:
            go_left = x <= tree.threshold[node]
        node = int(tree.left[node] if go_left else tree.right[node])
    return node
