"""The stable partition's vector block: 16 rows at a time with AVX-512 compress.

The partition (``sweep_exact.partition_worker``) moves each row of a segment to the left or
the right part of a scratch buffer, in order. Row by row that is a load of the row's side
bit, a select between two cursors and three scattered stores, about 2.5 ns per row: a third
of a Covertype fit. AVX-512 does it for 16 rows in a few instructions: load 16 ids, values
and class codes; gather 16 side bits; store the rows that go left contiguously at the left
cursor and the others at the right cursor (``vpcompress`` packs them into a register in
their order, then a plain store writes it, so the partition stays stable and its result is
the same, bit for bit). Numba has no such operation and LLVM does not vectorise the row loop
into one, so :func:`partition_block` writes the LLVM intrinsics itself
(``llvm.masked.gather``, ``llvm.experimental.vector.compress``, ``llvm.ctpop``).

:data:`USE_COMPRESS` says whether the kernels take that path: only on a CPU with
AVX-512F and VBMI2 (compress of 8- and 16-bit class codes), only when numba compiles
for this host's CPU (``NUMBA_CPU_NAME`` unset: a portable cache for another CPU keeps the
row loop), and not under ``NUMBA_BOUNDSCHECK`` (the intrinsic's loads and stores are not
checked; the bounds-checked lane tests the row loop's index arithmetic instead) or
``NUMBA_DISABLE_JIT`` (an intrinsic has no Python version). Elsewhere
LLVM would expand the intrinsics into one conditional store per lane, slower than the row
loop. The kernels read the flag when they are compiled. Numba keys its cache on the CPU's
name and features, so a cache built on one CPU is not loaded on another; the other
conditions are not in the key (``NUMBA_BOUNDSCHECK`` is not either): a process that sets
them should have its own ``NUMBA_CACHE_DIR``, as the bounds-checked test lane does.

Bounds, which the caller guarantees: 16 ids, values and codes from position ``p``; the
side-bit array (``sweep_exact.new_side_flags``) has :data:`SIDE_FLAG_PADDING` bytes after the
last sample's byte, because each lane's gather reads 4 bytes from its id's byte; the output
arrays have :data:`STORE_SLACK` free positions after each side's part, because each block
writes 16 lanes at both cursors, of which only the rows that go to that side are kept (the
next block's store overwrites the rest).
"""

from __future__ import annotations

import numba
from llvmlite import binding as llvm_binding
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

BLOCK = 16  # rows per block: 16 x 32-bit lanes fill one 512-bit register
# Each block writes all BLOCK lanes at both cursors, so up to BLOCK - 1 positions after the
# rows a side keeps get garbage: the caller leaves this many free positions after the left
# part (before the right part starts) and after the right part.
STORE_SLACK = BLOCK
SIDE_FLAG_PADDING = 4  # bytes after the side bits: a lane's gather reads 4 from its id's byte
_REQUIRED_FEATURES = ("avx512f", "avx512vbmi2")
# LLVM 17 on has only opaque pointers, whose mangling ("v16p0") the gather's name uses, and
# ``llvm.experimental.vector.compress`` came with LLVM 19; older numba releases (numba >= 0.59
# is allowed) ship LLVM 14. Measured with LLVM 22 (llvmlite 0.50, numba 0.68.1).
_MIN_LLVM = (19,)


def _host_has_compress() -> bool:
    """Whether numba compiles for this host and the host has the compress we use."""
    if numba.config.CPU_NAME is not None or numba.config.BOUNDSCHECK or numba.config.DISABLE_JIT:
        return False  # another target CPU, the bounds-checked lane, or plain Python
    if llvm_binding.llvm_version_info < _MIN_LLVM:
        return False  # the gather's name below is mangled for opaque pointers
    try:
        features = llvm_binding.get_host_cpu_features()
    except RuntimeError:  # not available on every platform
        return False
    return all(features.get(name, False) for name in _REQUIRED_FEATURES)


USE_COMPRESS = _host_has_compress()

_I1 = ir.IntType(1)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


def _vector(element: ir.Type) -> ir.VectorType:
    return ir.VectorType(element, BLOCK)


def _splat(builder: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """Return the vector whose every lane is ``value``."""
    lanes = ir.Constant(_vector(value.type), ir.Undefined)
    lanes = builder.insert_element(lanes, value, ir.Constant(_I32, 0))
    return builder.shuffle_vector(lanes, lanes, ir.Constant(_vector(_I32), [0] * BLOCK))


def _suffix(element: ir.Type) -> str:
    """Return LLVM's name for a vector of ``element`` in an overloaded intrinsic's name."""
    if isinstance(element, ir.FloatType):
        return f"v{BLOCK}f32"
    return f"v{BLOCK}i{element.width}"


def _load_block(builder: ir.IRBuilder, data: ir.Value, p: ir.Value, element: ir.Type) -> ir.Value:
    """Load the 16 elements from position ``p`` of an array's data (unaligned)."""
    address = builder.bitcast(builder.gep(data, [p]), _vector(element).as_pointer())
    return builder.load(address, align=1)


def _compress_into(builder: ir.IRBuilder, lanes: ir.Value, data: ir.Value, at: ir.Value,
                   mask: ir.Value) -> None:  # fmt: skip
    """Write the lanes whose ``mask`` is set, in lane order, from position ``at`` on.

    The lanes are packed in a register (``llvm.experimental.vector.compress``, a
    ``vpcompress`` with a register destination), then all ``BLOCK`` of them are stored: the
    positions after the packed lanes get garbage (see ``STORE_SLACK``). The memory form of
    ``vpcompress`` (``llvm.masked.compressstore``), which writes only the packed lanes, is
    microcoded on AMD Zen 4: with it a Covertype fit took 2.07x the time of the row loop.
    """
    name = f"llvm.experimental.vector.compress.{_suffix(lanes.type.element)}"
    signature = ir.FunctionType(lanes.type, [lanes.type, mask.type, lanes.type])
    compress = cgutils.get_or_insert_function(builder.module, signature, name)
    packed = builder.call(compress, [lanes, mask, ir.Constant(lanes.type, ir.Undefined)])
    address = builder.bitcast(builder.gep(data, [at]), lanes.type.as_pointer())
    builder.store(packed, address, align=1)


def _side_bits(builder: ir.IRBuilder, flags: ir.Value, ids: ir.Value) -> ir.Value:
    """Return each id's bit of the side-flag array, as a vector of int32 (0 or 1)."""
    # The dword at byte id >> 3, shifted right by id & 7 (4 bytes read: SIDE_FLAG_PADDING).
    base = _splat(builder, builder.ptrtoint(flags, _I64))
    offsets = builder.zext(builder.lshr(ids, _splat(builder, ir.Constant(_I32, 3))),
                           _vector(_I64))  # fmt: skip
    addresses = builder.inttoptr(builder.add(base, offsets), _vector(_I32.as_pointer()))
    signature = ir.FunctionType(_vector(_I32), [addresses.type, _I32, _vector(_I1), _vector(_I32)])
    gather = cgutils.get_or_insert_function(
        builder.module, signature, f"llvm.masked.gather.v{BLOCK}i32.v{BLOCK}p0"
    )
    every_lane = ir.Constant(_vector(_I1), [1] * BLOCK)
    undefined = ir.Constant(_vector(_I32), ir.Undefined)
    words = builder.call(gather, [addresses, ir.Constant(_I32, 1), every_lane, undefined])
    shifts = builder.and_(ids, _splat(builder, ir.Constant(_I32, 7)))
    return builder.and_(builder.lshr(words, shifts), _splat(builder, ir.Constant(_I32, 1)))


@intrinsic
def partition_block(typingctx, idx, val, codes, p, flags, flip, out_idx, out_val, out_codes,
                    to_left, to_right):  # fmt: skip
    """Move rows ``p .. p + 15`` of a segment to their sides; return how many went left.

    ``idx``, ``val``, ``codes``: the feature's sorted ids (int32), values (float32) and class
    codes (uint8 or uint16); ``flags``: the side bits (``sweep_exact.new_side_flags``, with its
    padding); a row goes left when its id's bit differs from ``flip`` (0 or 1, uint64).
    Rows that go left are written to ``out_*`` from position ``to_left`` on, the others from
    ``to_right`` on, each side in row order. Positions are uint64. See the module docstring
    for the bounds.
    """
    arrays = (idx, val, codes, flags, out_idx, out_val, out_codes)
    if not all(isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C" for a in arrays):
        return None  # the loads and stores assume contiguous rows
    dtypes = (idx.dtype, out_idx.dtype, val.dtype, out_val.dtype, flags.dtype)
    if dtypes != (types.int32, types.int32, types.float32, types.float32, types.uint8):
        return None  # the lanes are typed for these
    if codes.dtype != out_codes.dtype or codes.dtype not in (types.uint8, types.uint16):
        return None
    signature = types.uint64(idx, val, codes, p, flags, flip, out_idx, out_val, out_codes,
                             to_left, to_right)  # fmt: skip

    def codegen(context, builder, sig, args):
        def data(k):
            return context.make_array(sig.args[k])(context, builder, args[k]).data

        p_, flip_, to_left_, to_right_ = args[3], args[5], args[9], args[10]
        ids = _load_block(builder, data(0), p_, _I32)
        values = _load_block(builder, data(1), p_, ir.FloatType())
        code_type = context.get_value_type(sig.args[2].dtype)
        row_codes = _load_block(builder, data(2), p_, code_type)
        bits = _side_bits(builder, data(4), ids)
        bits = builder.xor(bits, _splat(builder, builder.trunc(flip_, _I32)))
        left = builder.trunc(bits, _vector(_I1))
        right = builder.xor(left, ir.Constant(_vector(_I1), [1] * BLOCK))
        for lanes, k in ((ids, 6), (values, 7), (row_codes, 8)):
            _compress_into(builder, lanes, data(k), to_left_, left)
            _compress_into(builder, lanes, data(k), to_right_, right)
        mask = builder.bitcast(left, ir.IntType(BLOCK))
        popcount = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(mask.type, [mask.type]), f"llvm.ctpop.i{BLOCK}"
        )
        return builder.zext(builder.call(popcount, [mask]), _I64)

    return signature, codegen
