import numpy as np
import pytest

from gpuperf import validate as v


def test_accepts_good_input():
    x = np.ones(3, np.float32)
    assert v.array(x) is x
    assert v.block_size(256, power_of_two=True) == 256
    assert v.positive_int(np.int64(5), "n") == 5


@pytest.mark.parametrize("call,err,words", [
    (lambda: v.array([1.0]), TypeError, "np.asarray"),
    (lambda: v.array(np.ones(3, np.int32)), TypeError, "astype"),
    (lambda: v.array(np.ones((2, 2), np.float32)), ValueError, "ravel"),
    (lambda: v.array(np.ones(0, np.float32)), ValueError, "empty"),
    (lambda: v.array(np.ones(6, np.float32)[::2]), ValueError, "ascontiguousarray"),
    (lambda: v.block_size(1025), ValueError, "1024"),
    (lambda: v.block_size(96, power_of_two=True), ValueError, "64 or 128"),
    (lambda: v.block_size(100, multiple_of=32), ValueError, "128"),
    (lambda: v.block_size(2.5), TypeError, "integer"),
    (lambda: v.block_size(True), TypeError, "integer"),
    (lambda: v.positive_int(0, "n"), ValueError, ">= 1"),
    (lambda: v.positive_int(9, "n", maximum=8), ValueError, "between 1 and 8"),
    (lambda: v.choice("v9", "version", ["v0", "v1"]), ValueError, "'v0', 'v1'"),
    (lambda: v.shared_bytes(64 * 1024), ValueError, "48 KiB"),
    (lambda: v.same_shape(np.ones(2), np.ones(3)), ValueError, "same shape"),
])
def test_bad_input_messages_say_how_to_fix(call, err, words):
    with pytest.raises(err, match=words):
        call()


def test_device_arrays_are_accepted():
    from numba import cuda

    d = cuda.to_device(np.ones(4, np.float32))
    assert v.array(d) is d
    with pytest.raises(TypeError, match="float32"):
        v.array(cuda.to_device(np.ones(4)))


def test_aligned16_refuses_device_views_off_a_16_byte_boundary():
    from numba import cuda

    d = cuda.to_device(np.ones(16, np.float32))
    for ok in (d, d[4:], d[8:12], np.ones(5, np.float32)[1:]):  # NumPy: a launch copies it
        v.aligned16(ok, "x", "use a fresh one.")
    for k in (1, 2, 3, 5):
        with pytest.raises(ValueError, match=rf"^y starts {4 * k % 16} bytes past a 16-byte "
                                             r"boundary.*would fault: copy it\.$"):
            v.aligned16(d[k:], "y", "copy it.")


def test_a_read_only_input_is_read_and_a_read_only_output_refused():
    import numpy as np

    from gpuperf import validate as v

    x = np.arange(4, dtype=np.float32)
    x.flags.writeable = False
    got = v.array(x, name="x")
    assert got.flags.writeable and np.array_equal(got, x)  # a copy the launch may write back
    with pytest.raises(ValueError, match="out is read-only"):
        v.array(x, name="out", writes=True)
    import gpuperf as gp

    assert gp.reduce.reduce_sum(x, version="v2") == pytest.approx(6.0)


def test_gdn_refuses_energy_terms_that_leave_the_square_root_undefined():
    import numpy as np

    import gpuperf as gp

    w = np.ones((2, 3), np.float32)
    gamma, beta = np.ones((2, 2), np.float32), np.ones(2, np.float32)
    for args, word in (((w, gamma, -beta), "beta"), ((w, -gamma, beta), "gamma")):
        for fn in (gp.gdn.reference_forward, gp.gdn.forward):
            with pytest.raises(ValueError, match=word):
                fn(*args)
