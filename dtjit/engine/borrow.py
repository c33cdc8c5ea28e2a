"""Array views that skip reference counting, for the hot loops of serial kernels.

Every time compiled code hands an array to an inlined helper, numba increments and later
decrements the array's reference count (an atomic add on its meminfo, in a runtime call).
In a loop over thousands of small nodes that calls a few helpers with a dozen arrays each,
those updates are a measurable part of a one-thread fit (16-21 % of a hist fit, 4-6 % of an
exact one, measured when the serial kernels took these views). The body of a numba
``prange`` does not pay them: it receives its arrays with no meminfo, and updating a null
meminfo is a skipped branch. :func:`borrowed` gives the kernels the same views.

Rules of use (``tests/test_borrow.py`` checks them on the source):

- Borrow only in a kernel of its own (``kernel``), never in an inline
  helper, whose arguments are its caller's variables.
- Borrow only the kernel's *arguments*, or parts of them (unpacked, indexed, or a named tuple's
  fields): the caller holds a reference to each for the whole call, so the memory stays alive.
- An array created in the kernel is borrowed through a tuple that :func:`keep_alive` uses
  after the loop: numba frees an array right after its last use, which would otherwise be the
  ``borrowed`` call itself (freed scratch reused by the next allocation changed every tree).
- Views never leave the call: not returned, not stored.
"""

from __future__ import annotations

from numba import types
from numba.core.imputils import lower_builtin
from numba.extending import type_callable


def _view_without_meminfo(context, builder, array_type, array):
    """Return the array struct with a null meminfo (data, shape and strides shared)."""
    source = context.make_array(array_type)(context, builder, array)
    view = context.make_array(array_type)(context, builder)
    view.meminfo = context.get_constant_null(types.MemInfoPointer(types.voidptr))
    view.parent = source.parent
    view.nitems = source.nitems
    view.itemsize = source.itemsize
    view.data = source.data
    view.shape = source.shape
    view.strides = source.strides
    return view._getvalue()


def borrowed(values):
    """Return ``values``, a tuple, with every array in it replaced by an uncounted view.

    In Python this is the identity. In compiled code the arrays of the result share data,
    shape and strides with the inputs but carry no meminfo, so passing them on costs no
    reference-count updates. See the module docstring for when that is safe.
    """
    return values


def keep_alive(values):
    """Use ``values`` here, so numba frees none of them before this point."""


# Both are typed and lowered as builtins, not through ``overload``: an overload compiles
# an implementation function for every tuple type it meets (each kernel borrows its own),
# which cost about 0.16 s of a cold compile apiece; a lowered builtin compiles nothing.
@type_callable(borrowed)
def _type_borrowed(context):
    def typer(values):
        if isinstance(values, types.BaseTuple):
            return values
        return None

    return typer


@lower_builtin(borrowed, types.BaseTuple)
def _lower_borrowed(context, builder, signature, args):
    # A builtin returns a new reference, which numba releases later: other items get the
    # count that release takes back; a view has nothing to count or release.
    items = []
    for i, item_type in enumerate(signature.args[0]):
        item = builder.extract_value(args[0], i)
        if isinstance(item_type, types.Array):
            item = _view_without_meminfo(context, builder, item_type, item)
        else:
            context.nrt.incref(builder, item_type, item)
        items.append(item)
    return context.make_tuple(builder, signature.return_type, items)


@type_callable(keep_alive)
def _type_keep_alive(context):
    def typer(values):
        return types.none

    return typer


@lower_builtin(keep_alive, types.Any)
def _lower_keep_alive(context, builder, signature, args):
    return context.get_dummy_value()
