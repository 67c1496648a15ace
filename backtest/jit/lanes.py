"""Vector loops over rows of `LANES` doubles, for compiled code.

The exact EVs of several compositions at once (`odds.ev_fill_ahead`) walk
the same tree of products for every composition: each composition is a
lane, and a row holds one number of every lane. The loops here load, multiply
and add whole rows as LLVM vectors (`<LANES x double>`), so a row costs one
instruction where a lane at a time costs eight. numba's own loops do not
vectorise them: the rows are picked by index (the tree's parents), so LLVM
cannot tell that a row stored does not overlap a row loaded, and numba
leaves the superword vectoriser, which would pack them, switched off.

Each function is a numba intrinsic, inlined into its compiled caller, which
must pass C-contiguous float64 arrays of `LANES` columns (the types are
checked while compiling, the shapes are not). `lane_sums` is for exact
sums only, where every product and partial sum is a whole number below
2**53: it adds into two interleaved partial sums, with fused multiply-adds,
neither of which changes such a sum.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import make_array

from backtest.jit import numba_cache

numba_cache.install()  # before this module's functions are decorated for numba's cache

#: compositions a row holds: sixteen doubles, two AVX-512 registers (four
#: AVX2). On a 2.8 GHz Xeon a counter's EVs cost 2.7 us a hand with 8 lanes,
#: 1.8 with 16, 2.6 with 32 (whose rows no longer fit the caches as well)
LANES = 16

_I64 = ir.IntType(64)
_VEC = ir.VectorType(ir.DoubleType(), LANES)
_SPLAT = ir.Constant(ir.VectorType(ir.IntType(32), LANES), [0] * LANES)


def _rows(ty: Any) -> bool:
    return (
        isinstance(ty, types.Array)
        and ty.ndim == 2
        and ty.layout == "C"
        and ty.dtype == types.float64
    )


def _vector(ty: Any, dtype: Any) -> bool:
    return isinstance(ty, types.Array) and ty.ndim == 1 and ty.layout == "C" and ty.dtype == dtype


def _data(context: Any, builder: Any, ty: Any, value: Any) -> Any:
    return make_array(ty)(context, builder, value).data


def _row(builder: Any, data: Any, row: Any) -> Any:
    """A pointer to row `row` (an i64) of a (rows, LANES) array, as a vector."""
    ptr = builder.gep(data, [builder.mul(row, ir.Constant(_I64, LANES))])
    return builder.bitcast(ptr, _VEC.as_pointer())


def _product(builder: Any, fd: Any, gd: Any, pd: Any, qd: Any, i: Any) -> Any:
    """f[parent[i]] * g[factor[i]], a row."""
    p = builder.zext(builder.load(builder.gep(pd, [i])), _I64)
    q = builder.zext(builder.load(builder.gep(qd, [i])), _I64)
    return builder.fmul(
        builder.load(_row(builder, fd, p), align=8), builder.load(_row(builder, gd, q), align=8)
    )


@intrinsic
def lane_products(
    typingctx: Any, f: Any, g: Any, parent: Any, factor: Any, lo: Any, hi: Any
) -> Any:
    """f[i] = f[parent[i]] * g[factor[i]], row by row, for i in lo..hi-1 (in
    order: a parent comes before its children). parent and factor: uint32."""
    if not (
        _rows(f)
        and _rows(g)
        and _vector(parent, types.uint32)
        and _vector(factor, types.uint32)
        and isinstance(lo, types.Integer)
        and isinstance(hi, types.Integer)
    ):
        return None
    sig = types.void(f, g, parent, factor, lo, hi)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        a = signature.args
        fd, gd, pd, qd = (_data(context, builder, a[k], args[k]) for k in range(4))
        start = context.cast(builder, args[4], a[4], types.int64)
        stop = context.cast(builder, args[5], a[5], types.int64)
        with cgutils.for_range_slice(builder, start, stop, ir.Constant(_I64, 1), inc=True) as (
            i,
            _,
        ):
            builder.store(_product(builder, fd, gd, pd, qd, i), _row(builder, fd, i), align=8)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def lane_sums(
    typingctx: Any,
    f: Any,
    g: Any,
    parent: Any,
    factor: Any,
    ca: Any,
    cb: Any,
    offset: Any,
    lo: Any,
    hi: Any,
    store: Any,
    acc: Any,
) -> Any:
    """For i in lo..hi-1: x = f[parent[i]] * g[factor[i]] (a row), stored in
    f[i] if `store`; acc[0] += ca[i - offset] * x and acc[1] += cb[i - offset] * x.
    Two rows a step into two partial sums each, so that consecutive adds do
    not wait on each other: exact sums only (see the module)."""
    if not (
        _rows(f)
        and _rows(g)
        and _rows(acc)
        and _vector(parent, types.uint32)
        and _vector(factor, types.uint32)
        and _vector(ca, types.float64)
        and _vector(cb, types.float64)
        and isinstance(store, types.Boolean)
        and all(isinstance(x, types.Integer) for x in (offset, lo, hi))
    ):
        return None
    sig = types.void(f, g, parent, factor, ca, cb, offset, lo, hi, store, acc)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        a = signature.args
        fd, gd, pd, qd, cad, cbd = (_data(context, builder, a[k], args[k]) for k in range(6))
        accd = _data(context, builder, a[10], args[10])
        offset, start, stop = (context.cast(builder, args[k], a[k], types.int64) for k in (6, 7, 8))
        store = args[9]
        zero = cgutils.get_null_value(_VEC)
        sums = [cgutils.alloca_once_value(builder, zero) for _ in range(4)]

        def add(i: Any, s_a: Any, s_b: Any) -> None:
            x = _product(builder, fd, gd, pd, qd, i)
            with builder.if_then(store):
                builder.store(x, _row(builder, fd, i), align=8)
            k = builder.sub(i, offset)
            for total, cd in ((s_a, cad), (s_b, cbd)):
                c = builder.insert_element(
                    zero, builder.load(builder.gep(cd, [k])), ir.Constant(ir.IntType(32), 0)
                )
                c = builder.shuffle_vector(c, c, _SPLAT)
                product = builder.fmul(c, x, flags=("contract",))
                builder.store(
                    builder.fadd(builder.load(total), product, flags=("contract",)), total
                )

        # the rows in pairs, then the last one if their number is odd (none
        # when stop <= start)
        one = ir.Constant(_I64, 1)
        count = builder.select(
            builder.icmp_signed(">", stop, start), builder.sub(stop, start), ir.Constant(_I64, 0)
        )
        pairs_end = builder.sub(builder.add(start, count), builder.and_(count, one))
        with cgutils.for_range_slice(builder, start, pairs_end, ir.Constant(_I64, 2), inc=True) as (
            i,
            _,
        ):
            add(i, sums[0], sums[1])
            add(builder.add(i, one), sums[2], sums[3])
        with builder.if_then(builder.icmp_signed("<", pairs_end, stop)):
            add(pairs_end, sums[0], sums[1])
        for e in range(2):
            row = _row(builder, accd, ir.Constant(_I64, e))
            both = builder.fadd(builder.load(sums[e]), builder.load(sums[e + 2]))
            builder.store(builder.fadd(builder.load(row, align=8), both), row, align=8)
        return context.get_dummy_value()

    return sig, codegen
