"""The Python module on a real QEMU cluster (line4): every collective and
tensor call checked against NumPy, and bad input refused with an error that
names it, the cluster usable after."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import weft


@pytest.fixture(scope="module")
def cluster():
    with weft.Cluster.start("line4") as c:
        yield c


def parts(chips, n=1000, dtype=np.float32):
    rng = np.random.default_rng(7)
    if np.dtype(dtype).kind == "i":
        return [rng.integers(-1000, 1000, n).astype(dtype) for _ in range(chips)]
    return [rng.integers(-8, 8, n).astype(dtype) for _ in range(chips)]


def test_the_cluster_is_what_its_file_says(cluster):
    assert cluster.chips == 4
    assert cluster.name == "line4"


@pytest.mark.parametrize("transport", ["edm", "fabric"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_all_reduce_sums_every_chips_array(cluster, transport, dtype):
    x = parts(cluster.chips, dtype=dtype)
    for out in cluster.all_reduce(x, transport=transport):
        assert out.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(out, sum(x))


@pytest.mark.parametrize("op,reference", [("max", np.maximum), ("min", np.minimum), ("prod", np.multiply)])
def test_all_reduce_takes_other_reductions(cluster, op, reference):
    x = [a % 5 - 2 for a in parts(cluster.chips, n=257, dtype=np.int32)]  # small: prod stays in int32
    want = reference.reduce(x)
    for out in cluster.all_reduce(x, op=op):
        np.testing.assert_array_equal(out, want)


def test_all_gather_concatenates_in_chip_order(cluster):
    x = parts(cluster.chips, n=333)
    for out in cluster.all_gather(x):
        np.testing.assert_array_equal(out, np.concatenate(x))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_all_gather_along_an_axis_of_a_3d_array(cluster, axis):
    x = [np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5) + 100 * c for c in range(cluster.chips)]
    for out in cluster.all_gather(x, axis=axis):
        np.testing.assert_array_equal(out, np.concatenate(x, axis=axis))


def test_reduce_scatter_leaves_each_chip_its_block(cluster):
    x = parts(cluster.chips, n=1001)
    blocks = cluster.reduce_scatter(x)
    assert [len(b) for b in blocks] == [251, 250, 250, 250]  # the remainder to the first chips
    np.testing.assert_array_equal(np.concatenate(blocks), sum(x))


def test_broadcast_reduce_gather_and_scatter(cluster):
    x = parts(cluster.chips, n=512)
    for out in cluster.broadcast(x[2], root=2):
        np.testing.assert_array_equal(out, x[2])
    np.testing.assert_array_equal(cluster.reduce(x, root=1), sum(x))
    np.testing.assert_array_equal(cluster.gather(x, root=3), np.concatenate(x))
    np.testing.assert_array_equal(np.concatenate(cluster.scatter(x[0], root=0)), x[0])


def test_sendrecv_passes_each_array_to_the_next_round_the_ring(cluster):
    x = parts(cluster.chips, n=100)
    ring = cluster.ring_order()
    assert sorted(ring) == list(range(cluster.chips))
    got = cluster.sendrecv(x)
    for p, rank in enumerate(ring):
        np.testing.assert_array_equal(got[rank], x[ring[p - 1]])


def test_a_communicator_of_some_chips_runs_alone(cluster):
    x = parts(2, n=300)  # line4's chips 0-1-2-3: a communicator's cables are those among its chips
    for out in cluster.all_reduce(x, chips=[1, 2]):
        np.testing.assert_array_equal(out, x[0] + x[1])
    for out in cluster.all_gather(x, chips=[3, 2]):
        np.testing.assert_array_equal(out, np.concatenate(x))
    np.testing.assert_array_equal(cluster.reduce(x, root=1, chips=[1, 0]), x[0] + x[1])
    with pytest.raises(weft.Error, match="cut"):
        cluster.all_reduce(x, chips=[1, 3])
    with pytest.raises(weft.Error, match="twice"):
        cluster.all_reduce(x, chips=[1, 1])
    with pytest.raises(ValueError, match="one array per chip: 2, not 4"):
        cluster.all_reduce(parts(4), chips=[0, 1])


@pytest.mark.parametrize("layout", ["row", "tile"])
@pytest.mark.parametrize("memory", ["interleaved", "height", "width", "block"])
def test_a_tensor_comes_back_as_it_went_in(cluster, layout, memory):
    data = np.arange(70 * 45, dtype=np.float32).reshape(70, 45)  # not whole tiles either way
    t = cluster.put_tensor(1, data, layout=layout, memory=memory, grid=(2, 2) if memory == "block" else (2, 1))
    assert t.chip == 1 and t.units >= 2
    np.testing.assert_array_equal(cluster.get_tensor(t), data)


@pytest.mark.parametrize("transport", ["edm", "fabric"])
@pytest.mark.parametrize("layout,memory", [("tile", "interleaved"), ("tile", "width"), ("row", "height"),
                                           ("row", "interleaved"), ("tile", "block")])
def test_all_reduce_of_a_tensor_in_any_layout(cluster, transport, layout, memory):
    grid = (1, 2) if memory == "block" else (2, 1)
    x = [np.arange(40 * 70, dtype=np.float32).reshape(40, 70) % 13 - c for c in range(cluster.chips)]
    for out in cluster.all_reduce_tensor(x, layout=layout, memory=memory, grid=grid, transport=transport):
        np.testing.assert_array_equal(out, sum(x))
    want = np.maximum.reduce(x)
    for out in cluster.all_reduce_tensor(x, op="max", layout=layout, memory=memory, grid=grid):
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("transport", ["edm", "fabric"])
@pytest.mark.parametrize("layout,memory,out_memory,axis", [("tile", "interleaved", "width", 0),
                                                           ("tile", "block", "interleaved", 1),
                                                           ("row", "height", "height", 0),
                                                           ("row", "interleaved", "interleaved", 1)])
def test_reduce_scatter_of_a_tensor_in_any_layout(cluster, transport, layout, memory, out_memory, axis):
    n = cluster.chips
    grid = (1, 2) if memory == "block" else (2, 1)
    x = [np.arange(64 * n * 64, dtype=np.int32).reshape(64 * n, 64) % 29 - 3 * c for c in range(n)]
    if axis == 1:
        x = [a.reshape(64, 64 * n) for a in x]
    parts = np.split(sum(x), n, axis=axis)
    got = cluster.reduce_scatter_tensor(x, axis, layout=layout, memory=memory, out_memory=out_memory, grid=grid,
                                        transport=transport)
    for chip in range(n):
        np.testing.assert_array_equal(got[chip], parts[chip])


def test_reduce_scatter_of_a_dimension_the_chips_do_not_divide_is_refused(cluster):
    x = [np.ones((cluster.chips + 1, 64), np.float32)] * cluster.chips
    with pytest.raises(weft.Error, match="does not divide among"):
        cluster.reduce_scatter_tensor(x, 0)


def test_all_reduce_of_row_pages_cut_by_width_shards(cluster):
    x = [np.arange(8 * 64, dtype=np.float32).reshape(8, 64) * (c + 1) for c in range(cluster.chips)]
    for out in cluster.all_reduce_tensor(x, layout="row", memory="width"):
        np.testing.assert_array_equal(out, sum(x))


def test_tensors_placed_on_one_chip_keep_clear_of_each_other(cluster):
    a = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    b = -a[:32]
    ta = cluster.put_tensor(2, a, layout="tile")
    tb = cluster.put_tensor(2, b, layout="tile")
    tc = cluster.put_tensor(2, a.astype(np.int32), memory="height")
    td = cluster.put_tensor(2, b.astype(np.int32), memory="height")
    np.testing.assert_array_equal(cluster.get_tensor(ta), a)
    np.testing.assert_array_equal(cluster.get_tensor(tb), b)
    np.testing.assert_array_equal(cluster.get_tensor(tc), a.astype(np.int32))
    np.testing.assert_array_equal(cluster.get_tensor(td), b.astype(np.int32))
    with pytest.raises(weft.Error, match="would overlap one placed on chip 2"):
        cluster.put_tensor(2, a, layout="tile", offset=0)


def test_a_tensor_an_op_may_have_overwritten_is_refused(cluster):
    t = cluster.put_tensor(0, np.arange(64 * 64, dtype=np.float32).reshape(64, 64), layout="tile")
    cluster.all_reduce(parts(cluster.chips, n=1 << 18))  # its buffers start where the tensor is
    with pytest.raises(weft.Error, match="placed before an op"):
        cluster.get_tensor(t)


@pytest.mark.parametrize("transport", ["fabric", "edm"])
@pytest.mark.parametrize("memory,out_memory", [("interleaved", "height"), ("width", "interleaved")])
def test_tensor_all_gather_reshards_in_flight(cluster, memory, out_memory, transport):
    x = [np.full((32, 64), c, np.float16) + np.arange(64, dtype=np.float16) for c in range(cluster.chips)]
    for out in cluster.all_gather_tensor(x, axis=0, layout="tile", memory=memory, out_memory=out_memory,
                                         transport=transport):
        np.testing.assert_array_equal(out, np.concatenate(x))


def test_each_row_and_each_column_of_a_mesh_gathers_and_reduces_its_own():
    with weft.Cluster.start("mesh2x2") as mesh:
        x = [np.arange(32 * 32, dtype=np.int32).reshape(32, 32) * (c + 1) % 1009 for c in range(mesh.chips)]
        for mesh_axis in ("rows", "cols"):
            groups = mesh.mesh_axis_groups(mesh_axis)
            assert sorted(c for g in groups for c in g) == list(range(mesh.chips))
            out = mesh.all_gather_tensor(x, axis=1, layout="tile", mesh_axis=mesh_axis)
            for g in groups:
                for chip in g:
                    np.testing.assert_array_equal(out[chip], np.concatenate([x[c] for c in g], axis=1))
            reduced = mesh.all_reduce_tensor(x, layout="row", mesh_axis=mesh_axis)
            parts = mesh.reduce_scatter_tensor(x, 0, layout="row", mesh_axis=mesh_axis)
            for g in groups:
                total = sum(x[c] for c in g)
                for k, chip in enumerate(g):
                    np.testing.assert_array_equal(reduced[chip], total)
                    np.testing.assert_array_equal(parts[chip], np.split(total, len(g))[k])
        with pytest.raises(weft.Error, match="rows or cols, not 'diagonal'"):
            mesh.mesh_axis_groups("diagonal")
        # One logical tensor over the mesh: rows cut over its rows, columns over its columns. Its parts
        # stay on the chips from op to op, and the other calls keep clear of them.
        a = np.arange(64 * 64, dtype=np.int32).reshape(64, 64)
        t = weft.MeshTensor.shard(mesh, a, row_dim=0, col_dim=1, layout="tile")
        assert t.shape == (64, 64) and t.placements == (0, 1)
        assert all(p.shape == (32, 32) for p in t.parts)
        np.testing.assert_array_equal(t.to_array(), a)
        rows = t.all_gather("rows")  # each row of chips now holds its rows of a, whole
        assert rows.placements == (0, "replicate")
        assert all(p.shape == (32, 64) for p in rows.parts)
        mesh.all_reduce(x)  # a plain collective between mesh tensor ops leaves them alone
        np.testing.assert_array_equal(rows.to_array(), a)
        whole = rows.all_gather("cols")
        for p in whole.parts:
            np.testing.assert_array_equal(p, a)
        np.testing.assert_array_equal(t.to_array(), a)  # the first ops' input, still on the chips
        with pytest.raises(weft.Error, match="gathers a shard, but the tensor is replicate there"):
            whole.all_gather("rows")
        half_a_bank = 0x1E600000 // 8 // 2  # qemu-virt's DRAM in 8 banks: mesh tensors take the upper halves
        with pytest.raises(weft.Error, match="would take DRAM a mesh tensor holds"):
            mesh.put_tensor(0, a, offset=half_a_bank)
        # Partial values: each row's sum reduce-scattered and all-reduced among its chips.
        partial = weft.MeshTensor.from_parts(mesh, x, by_row=None, by_col="partial")
        assert partial.placements == ("replicate", "partial:sum")
        with pytest.raises(weft.Error, match="has no whole until its parts are reduced"):
            partial.to_array()
        groups = mesh.mesh_axis_groups("rows")
        total = sum(x[c] for c in groups[0])
        for g in groups[1:]:  # a replicate by_row: the same sum in every row
            for k, chip in enumerate(g):
                x[chip] = x[groups[0][k]]
        partial = weft.MeshTensor.from_parts(mesh, x, by_row=None, by_col="partial")
        np.testing.assert_array_equal(partial.reduce_scatter("rows", 1).to_array(), total)
        for p in partial.all_reduce("rows").parts:
            np.testing.assert_array_equal(p, total)


def test_bad_input_is_refused_by_name_and_the_cluster_stays_usable(cluster):
    x = parts(cluster.chips)
    with pytest.raises(TypeError, match="float64"):
        cluster.all_reduce([a.astype(np.float64) for a in x])
    with pytest.raises(ValueError, match="one array per chip: 4, not 3"):
        cluster.all_reduce(x[:3])
    with pytest.raises(ValueError, match="same shape"):
        cluster.all_reduce(x[:3] + [x[3][:10]])
    with pytest.raises(weft.Error, match="avg"):
        cluster.all_reduce(x, op="avg")
    with pytest.raises(weft.Error, match="root 9"):
        cluster.reduce(x, root=9)
    with pytest.raises(weft.Error, match="unknown transport 'pcie'"):
        cluster.all_reduce(x, transport="pcie")
    with pytest.raises(weft.Error, match="not 'diagonal'"):
        cluster.put_tensor(0, np.zeros((4, 4), np.float32), memory="diagonal")
    with pytest.raises(weft.Error, match="does not fit"):
        cluster.put_tensor(0, np.zeros((1 << 16, 1 << 14), np.int32))
    with pytest.raises(weft.Error, match="mesh"):
        cluster.all_gather_tensor(x, mesh_axis="rows")  # line4 is no 2D mesh
    with pytest.raises(weft.Error, match="chip 7 is not in the cluster"):
        cluster.put_tensor(7, np.zeros(4, np.float32))
    for out in cluster.all_reduce(x):
        np.testing.assert_array_equal(out, sum(x))


def test_a_cluster_that_cannot_start_or_attach_says_why(tmp_path):
    with pytest.raises(weft.Error, match="nosuch"):
        weft.Cluster.start("nosuch")
    run_dir = tmp_path / "empty"
    run_dir.mkdir(mode=0o700)
    with pytest.raises(weft.Error):
        weft.Cluster.attach(str(run_dir))


def test_a_closed_cluster_says_so():
    c = weft.Cluster.start("pair")
    c.close()
    with pytest.raises(weft.Error, match="closed"):
        c.all_reduce([np.zeros(4, np.float32)] * 2)


def warm_time(call):
    """The time of `call` run a second time: the first also sets up what later calls reuse (a runner,
    its transport), so a Ctrl-C timed by it could land after a later call had ended."""
    call()
    start = time.monotonic()
    call()
    return time.monotonic() - start


def test_ctrl_c_ends_a_running_op_and_the_cluster_stays_usable(cluster):
    x = [np.ones(8 << 20, np.float32) for _ in range(cluster.chips)]  # 32 MiB a chip
    whole = warm_time(lambda: cluster.all_reduce(x))
    threading.Timer(whole / 20, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    with pytest.raises(KeyboardInterrupt) as ctrl_c:
        cluster.all_reduce(x)
    # Stopped inside the call, not felt at its end: the call ended it (a
    # bound on the time failed beside the rest of the suite, the inputs'
    # copies then taking most of it).
    assert "the op was stopped" in " ".join(getattr(ctrl_c.value, "__notes__", []))
    np.testing.assert_array_equal(cluster.all_reduce([np.ones(5, np.float32)] * cluster.chips)[0], np.full(5, 4))


def test_ctrl_c_ends_a_running_tensor_op_and_the_cluster_stays_usable(cluster):
    x = [np.ones((1024 * cluster.chips, 1024), np.float32) for _ in range(cluster.chips)]  # 4 MiB per chip, on each
    whole = warm_time(lambda: cluster.reduce_scatter_tensor(x, 0, layout="tile"))
    threading.Timer(whole / 10, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    with pytest.raises(KeyboardInterrupt) as ctrl_c:
        cluster.reduce_scatter_tensor(x, 0, layout="tile")
    # Stopped inside the call (its kernels' wait, or the flat op's), not felt at its end.
    assert "the op was stopped" in " ".join(getattr(ctrl_c.value, "__notes__", []))
    y = [np.full((cluster.chips, 64), c, np.float32) for c in range(cluster.chips)]
    got = cluster.reduce_scatter_tensor(y, 0)
    np.testing.assert_array_equal(got[1], np.full((1, 64), sum(range(cluster.chips)), np.float32))


# The host-model machine: the same calls on chips modelled in this process.
@pytest.fixture(scope="module")
def model():
    with weft.Cluster.model("mesh3x3") as m:
        yield m


def test_a_model_is_the_cluster_file_in_this_process(model):
    assert (model.chips, model.name, model.run_dir) == (9, "mesh3x3", "")


@pytest.mark.parametrize("transport", ["edm", "fabric"])
def test_a_model_runs_every_collective_as_a_cluster_does(model, transport):
    x = parts(model.chips, n=301, dtype=np.int32)
    for out in model.all_reduce(x, transport=transport):
        np.testing.assert_array_equal(out, sum(x))
    for out in model.all_gather(x, transport=transport):
        np.testing.assert_array_equal(out, np.concatenate(x))
    blocks = np.array_split(sum(x), model.chips)
    for got, want in zip(model.reduce_scatter(x, transport=transport), blocks):
        np.testing.assert_array_equal(got, want)
    for out in model.broadcast(x[4], root=4, transport=transport):
        np.testing.assert_array_equal(out, x[4])


def test_a_model_refuses_tensors_by_name(model):
    with pytest.raises(weft.Error, match="tensors need a QEMU cluster"):
        model.put_tensor(0, np.zeros((32, 32), np.float32))
    np.testing.assert_array_equal(model.all_reduce([np.ones(3, np.float32)] * model.chips)[0], np.full(3, 9))


def test_a_closed_model_says_so():
    m = weft.Cluster.model("pair")
    m.close()
    with pytest.raises(weft.Error, match="the host model was closed"):
        m.all_reduce([np.ones(2, np.float32)] * 2)
