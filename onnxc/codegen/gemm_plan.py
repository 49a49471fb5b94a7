"""The static parameters of a `krnl.matmul`, resolved for one target (see gemm.py).

Separate from the emitter because run_main_graph needs them too: it reserves
the largest `scratch_bytes` of the module before the graph runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from onnxc.codegen.parallel import MIN_PARALLEL_WORK
from onnxc.codegen.target import Target
from onnxc.dialects.krnl import int_values
from onnxc.dialects.krnl_matmul import ConvGeometryAttr, MatmulALayout, MatmulBAccess, MatmulOp, matmul_scratch_pitch

RESERVE_SCRATCH = "onnxc_reserve_scratch"
"""Runtime support, called by run_main_graph: reserve scratch memory of the module's largest
`MatmulPlan.scratch_bytes` for the calling thread (and the pool's workers, as they join)."""


def vector_shape(target: Target) -> tuple[int, int]:
    """(floats per vector, vectors per tile row) for the target's SIMD unit.

    With mr = 12 tile rows: AVX-512 12 x 2 zmm = 24 of 32 registers, AVX2
    12 x 1 ymm = 12 of 16, VSX 12 x 4 = 48 of 64, z14 12 x 2 = 24 of 32,
    NEON 12 x 2 = 24 of 32, RVV (VLEN >= 128) 12 x 2 = 24 of 32. WebAssembly
    engines map SIMD128 onto the host's registers (16 xmm on x86): 12 x 1.
    rv64gc has no vector unit: LLVM splits the vectors into 48 scalar
    accumulators, so the narrower tile spills least.
    """
    if target.arch == "x86_64":
        return (16, 2) if target.has_avx512 else (8, 1)
    if target.arch == "ppc64le":
        return 4, 4
    if target.arch == "wasm32" or (target.arch == "riscv64" and not target.has_riscv_vectors):
        return 4, 1
    return 4, 2


def vector_registers(target: Target) -> int:
    """The vector registers of the target's SIMD unit (rv64gc: its 32 scalar ones, as 4-wide vectors)."""
    if target.arch == "x86_64":
        return 32 if target.has_avx512 else 16
    if target.arch == "ppc64le":
        return 64
    if target.arch == "wasm32":
        return 16
    if target.arch == "riscv64" and not target.has_riscv_vectors:
        return 8
    return 32


def window_tile_rows(out_w: int, target: Target) -> int:
    """mr for a window A (a conv's output pixels as rows): as many rows as fit the register file
    (rows x nv accumulators beside the nv vectors of B and two more; AVX-512: 14 rows x 2 zmm of
    32 registers) among the divisors of the output's width and its multiples, so that a tile is
    one run of an output row, or whole rows: its rows are then at constant offsets in the padded
    image (7x7 outputs: tiles of two rows, 28 accumulators, not 14)."""
    _, nv = vector_shape(target)
    limit = max(1, (vector_registers(target) - nv - 2) // nv)
    divisors = [d for d in range(1, min(limit, out_w) + 1) if out_w % d == 0]
    return max(divisors + list(range(out_w, limit + 1, out_w)))


@dataclass
class MatmulPlan:
    """The op's static parameters, resolved for one target."""

    m: int
    n: int
    k: int
    mr: int
    kc: int
    nc: int
    vw: int
    nv: int
    a_panels: bool
    a_strides: tuple[int, int]
    a_window: bool
    """A is read from an image in place, a row per output pixel (see MatmulALayout.WINDOW)."""
    im2col: bool
    b_panels: bool
    ldb: int
    conv: ConvGeometryAttr | None
    ldc: int
    batch: list[tuple[int, int, int]]
    bias_offsets: list[int]
    """Per batch triple: where its bias starts (all 0 but for the groups of a grouped conv)."""
    accumulate: bool
    transposed_c: bool
    """C[m, n] is stored at c[n*ldc + m]; the bias is per column (see `partial_tiles`)."""
    bias_columns: bool
    """The bias is per column, bias[n] (a MatMul's)."""
    activation: str | None
    """The epilogue's MatmulActivation (before the clamp), or none."""
    clip: tuple[float, float]
    has_bias: bool
    packed: bool
    window: bool
    run_time_rows: bool
    """M is known at run time only: `m` is the guess the schedule is chosen for."""
    run_time_columns: bool = False
    """N is known at run time only: `n` is the guess; B and C rows are N apart."""
    run_time_offsets: bool = False
    """B's and C's offsets move at run time (one sample of a run-time batch)."""
    run_time_image: bool = False
    """im2col from an image whose sizes are known at run time only."""
    fused: bool = True
    """Whether the target multiplies and adds vectors in one instruction. WebAssembly's SIMD128 does
    not: llvm.fma would become a call of the C library's software fmaf per lane."""
    vector_ldexp: bool = False
    """Whether the target's vectorized llvm.ldexp is one instruction (Target.has_vector_ldexp): the
    epilogue's exp scales by it."""

    @property
    def a_steps(self) -> tuple[int, int]:
        """A[m, k] is A's pointer + m*row step + k*column step: panels hold mr floats per k; a window
        A's columns are the image's row offsets instead (column step 0, see `row_offsets`)."""
        if self.a_window:
            return 1, 0
        return (1, self.mr) if self.a_panels else self.a_strides

    def pixel_offset(self, pixel: int) -> int:
        """A window A: where output pixel (oy, ox) (= divmod(pixel, OW)) reads the padded image,
        from where pixel 0 does: oy*SH*W + ox*SW (see MatmulALayout.WINDOW)."""
        conv = self.conv
        oy, ox = divmod(pixel, conv.output_w.data)
        return oy * conv.stride_h.data * conv.width.data + ox * conv.stride_w.data

    def a_row_offset(self, r: int) -> int:
        """Where row r of a tile of A starts, from the tile's first: a window A's tiles start a run
        of mr pixels of one output row, or whole rows (see window_tile_rows)."""
        return self.pixel_offset(r) if self.a_window else self.a_steps[0] * r

    @property
    def reads_image(self) -> bool:
        """Whether A or B is read from an image in place, through a table of row offsets."""
        return self.window or self.a_window

    @property
    def row_offsets(self) -> list[int]:
        """Window access: the offset of B's row (or A's column) k = (c, ky, kx) in the image."""
        conv = self.conv
        channels, height, width = conv.channels.data, conv.height.data, conv.width.data
        (kernel_h, kernel_w), (dilation_h, dilation_w) = conv.kernel, conv.dilation
        return [
            c * height * width + ky * dilation_h * width + kx * dilation_w
            for c in range(channels)
            for ky in range(kernel_h)
            for kx in range(kernel_w)
        ]

    @property
    def run_time_names(self) -> list[str]:
        """The sizes known at run time only, in the order the kernel's functions take them."""
        names = ["rows"] if self.run_time_rows else []
        names += ["columns"] if self.run_time_columns else []
        return names + (["height", "width", "output_h", "output_w", "pad_h", "pad_w"] if self.run_time_image else [])

    @property
    def functions_key(self) -> tuple:
        """Equal for plans whose products call the same functions: all but the batch."""
        fields = {name: value for name, value in vars(self).items() if name not in ("batch", "bias_offsets")}
        return ("plan", *fields.items())

    @property
    def pitch(self) -> int:
        return matmul_scratch_pitch(self.nc if self.run_time_columns else self.n, self.nc)

    @property
    def nr(self) -> int:
        return self.vw * self.nv

    @property
    def row_tiles(self) -> int:
        return -(-self.m // self.mr)

    @property
    def column_tiles(self) -> int:
        return -(-self.n // self.nr)

    @property
    def partial_tiles(self) -> int:
        """Register tiles of a column block: with transposed_c, the partial sums of every reduction
        block but the last go to the thread's scratch, contiguous, tile after tile (row tile, then
        column tile of the block, mr x nr floats each): only the last block stores the tile
        transposed, into C, lane by lane (a scatter: each lane another channel's plane)."""
        return self.row_tiles * -(-min(self.n, self.nc) // self.nr) if self.transposed_c else 0

    @property
    def scratch_bytes(self) -> int:
        """Scratch memory of a thread: the B block it packs, or a transposed C's partial tiles."""
        if self.transposed_c:
            return 4 * self.partial_tiles * self.mr * self.nr
        return 4 * self.kc * self.pitch if self.packed else 0

    @property
    def split_rows(self) -> bool:
        """The grid of tiles the threads split (tile_grid.py) is numbered row tile first (each
        thread packs and reads all of B for its rows), or else column tile first (each reads all
        of A for its columns): whichever has more tiles, with M known at run time only counted
        at its guess. (Always rows there had each of two threads stream all of a transformer
        layer's weights: BERT-base at 128 tokens took 73 ms on two threads, 57 by columns; at
        1,024 rows 420 -> 399.) Columns where B is im2col's, gathered at run time, in more than
        one column tile, unless A has more than twice its columns' rows (see `gathers_by_columns`)."""
        return self.row_tiles >= self.column_tiles and not self.gathers_by_columns(self.row_tiles, self.column_tiles)

    def gathers_by_columns(self, row_tiles: int, column_tiles: int) -> bool:
        """Whether an im2col product of these tile counts is better split by columns: by rows every thread gathers all of B, by columns every thread
        reads all of A. DeepLab's small products of dilated taps (96 rows x 36-196 columns) ran
        no faster on two threads than on one by rows (deeplabv3_style on two threads 6.40 -> 6.24
        ms by columns); ResNet-50's strided 1x1 convs (1,024 rows x 196 columns, 2 MB of A) were
        slower by columns (0.87 -> 1.03 ms)."""
        return self.im2col and column_tiles > 1 and 2 * column_tiles * self.nr >= row_tiles * self.mr

    @property
    def parallel(self) -> bool:
        """Whether a product goes to the thread pool: enough work to repay waking it."""
        return self.row_tiles * self.column_tiles > 1 and 2 * self.m * self.k * self.n >= MIN_PARALLEL_WORK

    @staticmethod
    def of(op: MatmulOp, target: Target) -> MatmulPlan:
        m, n, k = int_values(op.sizes)
        mr, kc, nc = int_values(op.tile)
        vw, nv = vector_shape(target)
        offsets = int_values(op.batch)
        a_window = op.a_layout.data == MatmulALayout.WINDOW
        if a_window:  # the tile's rows depend on the target and the image: see window_tile_rows
            mr = window_tile_rows(op.conv.output_w.data, target)
        return MatmulPlan(
            m,
            n,
            k,
            mr,
            min(kc, k),
            nc,
            vw,
            nv,
            a_panels=op.a_layout.data == MatmulALayout.PANELS,
            a_strides=tuple(int_values(op.a_strides)),
            a_window=a_window,
            im2col=op.b_access.data == MatmulBAccess.IM2COL,
            b_panels=op.b_access.data == MatmulBAccess.PANELS,
            ldb=op.ldb.value.data,
            conv=op.conv,
            ldc=op.ldc.value.data,
            batch=[tuple(offsets[i : i + 3]) for i in range(0, len(offsets), 3)],
            bias_offsets=int_values(op.bias_offsets) if op.bias_offsets is not None else [0] * (len(offsets) // 3),
            accumulate=op.accumulate is not None,
            transposed_c=op.transposed_c is not None,
            bias_columns=op.bias_columns is not None,
            activation=op.activation.data.value if op.activation is not None else None,
            clip=op.clip_bounds,
            has_bias=op.bias is not None,
            packed=op.pack is not None,
            window=op.b_access.data == MatmulBAccess.WINDOW,
            run_time_rows=op.rows is not None,
            run_time_columns=op.columns is not None,
            run_time_offsets=bool(op.offsets),
            run_time_image=bool(op.image),
            fused=not target.is_wasm,
            vector_ldexp=target.has_vector_ldexp,
        )
