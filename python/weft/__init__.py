"""weft from Python: a QEMU cluster of accelerator chips, its collectives on
NumPy arrays, and tensors in the chips' layouts.

    import numpy as np
    import weft

    with weft.Cluster.start("ring8") as cluster:      # or weft.Cluster.attach()
        x = [np.full(1024, chip, np.float32) for chip in range(cluster.chips)]
        total = cluster.all_reduce(x)                   # one array per chip
        parts = cluster.all_gather(x)                   # each chip's gathered copy

One array per rank goes in, one comes out per rank, as NCCL's ranks see it:
rank r is chip r, or chips[r] for a call given chips=[...] (a communicator
of those chips alone). Arrays are float32, float16 or int32. Every call waits
with a deadline; a failed op raises weft.Error (weft.TimeoutError with the
hang report, weft.FaultError naming the core) and leaves the cluster usable.
"""

import numpy as np

from ._weft import Error, FaultError, NativeCluster, PlacedTensor, TimeoutError

__all__ = ["Cluster", "Tensor", "MeshTensor", "Error", "TimeoutError", "FaultError"]


def _arrays(arrays, chips, what):
    if len(arrays) != chips:
        raise ValueError(f"{what} takes one array per chip: {chips}, not {len(arrays)}")
    return [None if a is None else np.ascontiguousarray(a) for a in arrays]


def _same_shape(arrays, what):
    shapes = {a.shape for a in arrays if a is not None}
    if len(shapes) > 1:
        raise ValueError(f"{what}: every chip's array must have the same shape, not {sorted(shapes)}")
    return shapes.pop()


class Tensor:
    """A tensor placed on one chip in a layout (Cluster.put_tensor)."""

    def __init__(self, placed, shape, layout, memory):
        self._placed = placed
        self.shape = tuple(shape)
        self.layout = layout
        self.memory = memory

    @property
    def chip(self):
        return self._placed.chip

    @property
    def pages(self):
        """Its pages: 32x32 tiles, or rows (a shard's width when sharded by width)."""
        return self._placed.pages

    @property
    def units(self):
        """The DRAM banks or worker cores it is spread over."""
        return self._placed.units

    def __repr__(self):
        return f"weft.Tensor(chip={self.chip}, shape={self.shape}, layout={self.layout!r}, memory={self.memory!r})"


def _placement(p, ndim, what):
    """A placement as the native module names it: None or "replicate", a dimension (cut along it), or
    "partial" / "partial:<op>" (max, min, prod)."""
    if p is None or p == "replicate":
        return "replicate"
    if isinstance(p, str) and (p == "partial" or p.startswith("partial:")):
        return p
    if isinstance(p, int) and not isinstance(p, bool):
        if not -ndim <= p < ndim:
            raise ValueError(f"MeshTensor: {what} {p} is not a dimension of a {ndim}-D tensor")
        return f"shard:{p % ndim + 4 - ndim}"
    raise ValueError(f"MeshTensor: {what} is a dimension, None, 'replicate' or 'partial[:op]', not {p!r}")


class MeshTensor:
    """One logical tensor over a cluster's one 2D mesh, its parts on the chips: they stay there from op
    to op until the mesh tensor is dropped. Along each axis of the mesh the parts are cut along a
    dimension (a shard), the same (replicate), or partial values whose element-wise reduction is the
    whole ("partial", or "partial:max", "partial:min", "partial:prod"): `by_row` says how they differ
    from one row of chips to the next, `by_col` from one column to the next. An op along "rows" runs in
    every row of chips at once (on by_col), along "cols" in every column (on by_row)."""

    def __init__(self, cluster, native, ndim):
        self.cluster, self._native, self._ndim = cluster, native, ndim

    @classmethod
    def shard(cls, cluster, array, row_dim=None, col_dim=None, layout="row"):
        """`array` cut into a part a chip, written to the chips: its dimension `row_dim` across the
        mesh's rows, `col_dim` across its columns (None: whole along that axis); pages in `layout`
        ("row" or "tile")."""
        array = np.ascontiguousarray(array)
        if not 1 <= array.ndim <= 4:
            raise ValueError("MeshTensor.shard: arrays of 1 to 4 dimensions")
        native = cluster._native.mesh_tensor_from_host(array, layout, _placement(row_dim, array.ndim, "row_dim"),
                                                       _placement(col_dim, array.ndim, "col_dim"))
        return cls(cluster, native, array.ndim)

    @classmethod
    def from_parts(cls, cluster, parts, by_row=None, by_col=None, layout="row"):
        """A part a chip (`parts`, by chip, one shape), written to the chips, related along each axis
        as `by_row` and `by_col` say (a dimension, None for replicate, or "partial[:op]")."""
        parts = _arrays(parts, cluster.chips, "MeshTensor.from_parts")
        shape = _same_shape(parts, "MeshTensor.from_parts")
        if not 1 <= len(shape) <= 4:
            raise ValueError("MeshTensor.from_parts: parts of 1 to 4 dimensions")
        native = cluster._native.mesh_tensor_from_parts(parts, layout, _placement(by_row, len(shape), "by_row"),
                                                        _placement(by_col, len(shape), "by_col"))
        return cls(cluster, native, len(shape))

    def _dims(self, shape4):
        return tuple(shape4[4 - self._ndim:])

    def _placement_of(self, native):
        """The native module's "shard(D)", "replicate" or "partial(OP)" as from_parts takes it."""
        if native.startswith("shard("):
            return int(native[6:-1]) - (4 - self._ndim)
        if native.startswith("partial("):
            return "partial:" + native[8:-1]
        return native

    @property
    def shape(self):
        """The logical tensor's shape."""
        return self._dims(self._native.whole_shape)

    @property
    def placements(self):
        """(by_row, by_col) as from_parts takes them: a dimension cut, "replicate" or "partial:<op>"."""
        return self._placement_of(self._native.by_row), self._placement_of(self._native.by_col)

    @property
    def parts(self):
        """Each chip's part (by chip), read back from it."""
        shape = self._dims(self._native.part_shape)
        return [self.cluster._native.mesh_tensor_part(self._native, chip).reshape(shape)
                for chip in range(self.cluster.chips)]

    def to_array(self):
        """The whole tensor, put back together from the parts on the chips (refused while partial)."""
        return self.cluster._native.mesh_tensor_whole(self._native).reshape(self.shape)

    def _op(self, op, mesh_axis, dim=0):
        return MeshTensor(self.cluster, self.cluster._native.mesh_tensor_op(self._native, op, mesh_axis, dim),
                          self._ndim)

    def all_gather(self, mesh_axis):
        """Every row ("rows": the dimension cut across columns) or column ("cols") of chips gathers its
        parts at once, on the chips; returns the mesh tensor that leaves (replicate along that axis)."""
        return self._op("all_gather", mesh_axis)

    def reduce_scatter(self, mesh_axis, dim):
        """Every row ("rows") or column ("cols") of chips reduces its partial parts and cuts the result
        along `dim`, a piece a chip; returns the mesh tensor that leaves (cut along `dim` there)."""
        if not -self._ndim <= dim < self._ndim:
            raise ValueError(f"MeshTensor.reduce_scatter: dim {dim} of a {self._ndim}-D tensor")
        return self._op("reduce_scatter", mesh_axis, dim % self._ndim + 4 - self._ndim)

    def all_reduce(self, mesh_axis):
        """Every row ("rows") or column ("cols") of chips reduces its partial parts into each chip's;
        returns the mesh tensor that leaves (replicate along that axis)."""
        return self._op("all_reduce", mesh_axis)

    def __repr__(self):
        by_row, by_col = self.placements
        return f"weft.MeshTensor(shape={self.shape}, by_row={by_row!r}, by_col={by_col!r})"


class Cluster:
    """A running cluster: started here (and stopped by close()), or attached to."""

    def __init__(self, native):
        self._native = native

    @classmethod
    def start(cls, cluster="ring8", run_dir=None):
        """Boots a cluster from a file of clusters/ (a name) or a path; stopped by close()."""
        return cls(NativeCluster.start(cluster, run_dir or ""))

    @classmethod
    def attach(cls, run_dir=None):
        """The cluster `weft up` started ($WEFT_RUN_DIR or /tmp/weft-UID by default)."""
        return cls(NativeCluster.attach(run_dir or ""))

    @classmethod
    def model(cls, cluster="ring8"):
        """The cluster's chips modelled in this process, no QEMU: weft's own
        kernels on host memory run the collectives in milliseconds (tensors
        need a started cluster). Its run_dir is ""."""
        return cls(NativeCluster.model(cluster))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Stops the cluster if this process started it; lets go of it if attached."""
        self._native.close()

    @property
    def chips(self):
        return self._native.chips

    @property
    def name(self):
        return self._native.name

    @property
    def run_dir(self):
        return self._native.run_dir

    def _ranks(self, chips):
        return len(chips) if chips is not None else self.chips

    def _run(self, op, arrays, chips=None, **options):
        return self._native.collective(op, arrays, chips=list(chips or []), **options)

    def ring_order(self, chips=None, transport="auto"):
        """The ranks in the order of the communicator's ring: sendrecv sends each rank's array to the next."""
        return self._native.ring_order(transport, list(chips or []))

    def all_reduce(self, arrays, op="sum", algo="auto", transport="auto", chips=None):
        """Every chip gets the element-wise reduction (sum, max, min, prod) of all chips' arrays."""
        arrays = _arrays(arrays, self._ranks(chips), "all_reduce")
        shape = _same_shape(arrays, "all_reduce")
        out = self._run("all_reduce", arrays, redop=op, algo=algo, transport=transport, chips=chips)
        return [o.reshape(shape) for o in out]

    def all_gather(self, arrays, axis=0, algo="auto", transport="auto", chips=None):
        """Every chip gets all chips' arrays concatenated along `axis` (up to 4-D), in chip order."""
        arrays = _arrays(arrays, self._ranks(chips), "all_gather")
        shape = _same_shape(arrays, "all_gather")
        if not -len(shape) <= axis < max(len(shape), 1):
            raise ValueError(f"all_gather: axis {axis} of arrays of {len(shape)} dimensions")
        axis %= max(len(shape), 1)
        if len(shape) > 4:
            raise ValueError("all_gather: arrays of at most 4 dimensions")
        options = {}
        if len(shape) > 1:
            options = {"shape": list(shape), "dim": axis + 4 - len(shape)}
        out = self._run("all_gather", arrays, algo=algo, transport=transport, **options, chips=chips)
        whole = list(shape) if shape else [1]
        whole[axis] *= self._ranks(chips)
        return [o.reshape(whole) for o in out]

    def reduce_scatter(self, arrays, op="sum", algo="auto", transport="auto", chips=None):
        """Chip r gets block r of the reduction of all chips' 1-D arrays (remainders to the first chips)."""
        arrays = _arrays(arrays, self._ranks(chips), "reduce_scatter")
        _same_shape(arrays, "reduce_scatter")
        flat = [a.ravel() for a in arrays]
        return self._run("reduce_scatter", flat, redop=op, algo=algo, transport=transport, chips=chips)

    def broadcast(self, array, root=0, algo="auto", transport="auto", chips=None):
        """Every chip gets `array`, sent from chip `root`."""
        array = np.ascontiguousarray(array)
        arrays = [array if chip == root else None for chip in range(self._ranks(chips))]
        out = self._run("broadcast", arrays, root=root, algo=algo, transport=transport, chips=chips)
        return [o.reshape(array.shape) for o in out]

    def reduce(self, arrays, root=0, op="sum", algo="auto", transport="auto", chips=None):
        """Chip `root` gets the element-wise reduction of all chips' arrays (returned)."""
        arrays = _arrays(arrays, self._ranks(chips), "reduce")
        shape = _same_shape(arrays, "reduce")
        out = self._run("reduce", arrays, root=root, redop=op, algo=algo, transport=transport, chips=chips)
        return out[root].reshape(shape)

    def gather(self, arrays, root=0, algo="auto", transport="auto", chips=None):
        """Chip `root` gets all chips' 1-D arrays concatenated in chip order (returned)."""
        arrays = _arrays(arrays, self._ranks(chips), "gather")
        _same_shape(arrays, "gather")
        flat = [a.ravel() for a in arrays]
        out = self._run("gather", flat, root=root, algo=algo, transport=transport, chips=chips)
        return out[root]

    def scatter(self, array, root=0, algo="auto", transport="auto", chips=None):
        """Chip r gets block r of chip `root`'s 1-D `array` (remainders to the first chips)."""
        array = np.ascontiguousarray(array).ravel()
        arrays = [array if chip == root else None for chip in range(self._ranks(chips))]
        return self._run("scatter", arrays, root=root, algo=algo, transport=transport, chips=chips)

    def sendrecv(self, arrays, algo="auto", transport="auto", chips=None):
        """Each rank's array goes to the next rank round the ring (ring_order); returns what each received."""
        arrays = _arrays(arrays, self._ranks(chips), "sendrecv")
        shape = _same_shape(arrays, "sendrecv")
        out = self._run("sendrecv", arrays, algo=algo, transport=transport, chips=chips)
        return [o.reshape(shape) for o in out]

    def put_tensor(self, chip, array, layout="row", memory="interleaved", grid=(2, 1), offset=None):
        """Places `array` (up to 4-D) on `chip`: layout "row" (row-major pages) or "tile" (32x32 tiles,
        four 16x16 faces each); memory "interleaved" over the DRAM banks, or "height", "width" or
        "block" sharded over a grid (columns, rows) of worker cores' L1. `offset`: bytes into each bank
        (or core's L1) where it goes; None: clear of the tensors placed on that chip since the last op."""
        array = np.ascontiguousarray(array)
        placed = self._native.put_tensor(chip, array, layout, memory, tuple(grid), offset)
        return Tensor(placed, array.shape, layout, memory)

    def get_tensor(self, tensor):
        """The tensor's elements, read back from its chip, as an array of its shape."""
        return self._native.get_tensor(tensor._placed).reshape(tensor.shape)

    def all_reduce_tensor(self, tensors, op="sum", layout="row", memory="interleaved", grid=(2, 1),
                          algo="auto", transport="auto", mesh_axis=""):
        """Each chip's tensor placed in `layout` and `memory`, reduced element-wise (sum, max, min,
        prod) into every chip's copy, through the flat all-reduce (`algo`) over `transport`. With
        `mesh_axis` ("rows" or "cols") each row (column) of the mesh reduces its own, at once."""
        tensors = _arrays(tensors, self.chips, "all_reduce_tensor")
        shape = _same_shape(tensors, "all_reduce_tensor")
        if not 1 <= len(shape) <= 4:
            raise ValueError("all_reduce_tensor: tensors of 1 to 4 dimensions")
        out = self._native.all_reduce_tensor(tensors, op, algo, transport, layout, memory, tuple(grid), mesh_axis)
        return [o.reshape(shape) for o in out]

    def reduce_scatter_tensor(self, tensors, dim, op="sum", layout="row", memory="interleaved", out_memory="",
                              grid=(2, 1), algo="auto", transport="auto", mesh_axis=""):
        """Each chip's tensor placed in `layout` and `memory`, reduced element-wise (sum, max, min,
        prod) and cut along `dim` into a part a chip (in `out_memory`, else `memory`), through the
        flat reduce-scatter (`algo`) over `transport`. Returns each chip's part. With `mesh_axis`
        ("rows" or "cols") each row (column) of the mesh reduces and cuts its own, at once."""
        tensors = _arrays(tensors, self.chips, "reduce_scatter_tensor")
        shape = _same_shape(tensors, "reduce_scatter_tensor")
        if not 1 <= len(shape) <= 4:
            raise ValueError("reduce_scatter_tensor: tensors of 1 to 4 dimensions")
        if not -len(shape) <= dim < len(shape):
            raise ValueError(f"reduce_scatter_tensor: dim {dim} of a {len(shape)}-D tensor")
        dim %= len(shape)
        out = self._native.reduce_scatter_tensor(tensors, dim, op, algo, transport, layout, memory, out_memory,
                                                 tuple(grid), mesh_axis)
        part = list(shape)
        part[dim] //= len(self.mesh_axis_groups(mesh_axis)[0]) if mesh_axis else len(tensors)
        return [o.reshape(part) for o in out]

    def mesh_axis_groups(self, mesh_axis):
        """The chips along each row ("rows") or column ("cols") of the cluster's one 2D mesh."""
        return self._native.mesh_axis_groups(mesh_axis)

    def all_gather_tensor(self, parts, axis=0, layout="row", memory="interleaved", out_memory=None, grid=(2, 1),
                          mesh_axis=None, transport="fabric"):
        """Each chip's part placed in `layout` and `memory`, gathered over the fabric along `axis` into
        `out_memory` (default: `memory`), resharded on the way; returns each chip's gathered tensor.
        With `mesh_axis` ("rows" or "cols") each row or column of a 2D mesh gathers its own, all at once.
        With `transport="edm"` the parts go through the flat all-gather over the EDM instead."""
        parts = _arrays(parts, self.chips, "all_gather_tensor")
        shape = _same_shape(parts, "all_gather_tensor")
        if not -len(shape) <= axis < len(shape):
            raise ValueError(f"all_gather_tensor: axis {axis} of parts of {len(shape)} dimensions")
        axis %= len(shape)
        group = len(self.mesh_axis_groups(mesh_axis)[0]) if mesh_axis else self.chips
        out = self._native.all_gather_tensor(parts, axis, layout, memory, out_memory or "", tuple(grid),
                                             mesh_axis or "", transport)
        whole = list(shape)
        whole[axis] *= group
        return [o.reshape(whole) for o in out]

    def __repr__(self):
        if self._native.closed:
            return f"weft.Cluster(closed, run_dir={self.run_dir!r})"
        return f"weft.Cluster({self.name!r}, {self.chips} chips, run_dir={self.run_dir!r})"
