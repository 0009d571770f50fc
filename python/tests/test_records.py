"""A record array whose members NumPy and PyTorch import as strided views, writes visible both ways."""

import gc
import weakref

import numpy as np

import dlspan
import dlspan.examples


def test_fields_are_strided_zero_copy_views(torch):
    p = dlspan.examples.Particles(5)
    fields = p.fields()
    assert (fields["position"].shape, fields["position"].strides) == ((5, 3), (6, 1))
    assert (fields["mass"].shape, fields["mass"].strides, fields["mass"].dtype) == ((5,), (6,), "float32")
    assert fields["id"].dtype == "uint32"
    np.testing.assert_array_equal(np.from_dlpack(fields["id"]), np.arange(5))
    mass = np.from_dlpack(fields["mass"])
    position = torch.from_dlpack(fields["position"])
    assert mass.strides == (24,) and position.stride() == (6, 1)
    mass[:] = [1, 2, 3, 4, 5]
    position[:, 1] = 7.0
    assert p.record(3) == ([0.0, 7.0, 0.0], 4.0, 3, 0.0), "NumPy and PyTorch writes land in the records"
    p.scale_masses(10.0)
    np.testing.assert_array_equal(mass, [10, 20, 30, 40, 50]), "Rust writes show in NumPy"
    assert np.from_dlpack(fields["charge"]).sum() == 0
    assert len(p) == 5


def test_members_do_not_conflict_but_a_member_and_itself_do():
    p = dlspan.examples.Particles(4)
    f = p.fields()
    dlspan.add(f["mass"], f["mass"], f["charge"])  # disjoint members of the same records
    try:
        dlspan.add(f["mass"], f["charge"], f["mass"])
    except ValueError as err:
        assert err.kind == "BorrowConflict"
    else:
        raise AssertionError("a member as input and output")


def test_fields_keep_the_records_alive():
    p = dlspan.examples.Particles(3)
    alive = weakref.ref(p)
    ids = np.from_dlpack(p.fields()["id"])
    del p
    gc.collect()
    assert alive() is not None
    np.testing.assert_array_equal(ids, [0, 1, 2])
    del ids
    gc.collect()
    assert alive() is None
