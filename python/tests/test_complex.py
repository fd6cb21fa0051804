"""complex64 and complex128 end to end: Zarr v2 arrays written by zarr-python (either byte
order, a complex fill value) read exactly, Tessera's own writes read back by zarr-python,
the computed values shared with numpy without a copy, and the array API's namespace.
The functions themselves are checked against numpy in test_properties.py."""

import numpy as np
import pytest
import zarr

import tessera
import tessera.array_api as xp


def complex_values(rng, shape, dtype):
    parts = rng.standard_normal((2, *shape))
    return (parts[0] + 1j * parts[1]).astype(dtype)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("byte_order", ["<", ">"])
def test_zarr_python_arrays_read_and_write_back_exactly(rng, spec, tmp_path, dtype, byte_order):
    values = complex_values(rng, (7, 5), np.dtype(dtype).newbyteorder(byte_order))
    source = tmp_path / "source.zarr"
    stored = zarr.create_array(source, shape=values.shape, chunks=(3, 2), dtype=values.dtype,
                               zarr_format=2, fill_value=complex(1, -2))
    stored[:5] = values[:5]  # the chunks of the last rows stay unwritten: the fill value
    expected = stored[:]
    assert expected[6, 0] == 1 - 2j

    x = tessera.from_zarr(str(source), spec=spec)
    assert x.dtype == np.dtype(dtype)  # held in native byte order
    np.testing.assert_array_equal(x.compute(), expected)

    target = tmp_path / "target.zarr"
    tessera.to_zarr(x * (2 - 1j), str(target))
    back = zarr.open_array(target, mode="r")
    assert back.dtype == np.dtype(dtype)
    np.testing.assert_allclose(back[:], expected * (2 - 1j), rtol=1e-6)


def test_a_computed_complex_result_is_shared_with_numpy(spec):
    x = xp.asarray(np.arange(6) * (1 + 1j), chunks=4, spec=spec).astype("complex64") * 1j
    result = x.compute()
    assert result.dtype == np.complex64
    np.testing.assert_array_equal(result, (np.arange(6) * (1 + 1j) * 1j).astype(np.complex64))
    assert np.shares_memory(result, np.from_dlpack(result))
    assert memoryview(result).format == "Zf"


def test_the_namespace_offers_complex_dtypes(spec):
    info = xp.__array_namespace_info__()
    assert info.default_dtypes()["complex floating"] == xp.complex128
    assert set(info.dtypes(kind="complex floating")) == {"complex64", "complex128"}
    assert xp.isdtype(xp.complex64, "numeric") and not xp.isdtype(xp.complex64, "real floating")
    z = xp.linspace(0, 2 + 2j, 5, chunks=2, spec=spec)
    assert z.dtype == xp.complex128
    np.testing.assert_allclose(z.compute(), np.linspace(0, 2 + 2j, 5))
    zeros = xp.zeros((2, 3), dtype=xp.complex64, chunks=(1, 2), spec=spec)
    np.testing.assert_array_equal((zeros + 1j).compute(), np.full((2, 3), 1j, np.complex64))
    np.testing.assert_array_equal(xp.full((2,), 1 - 1j, spec=spec).compute(), [1 - 1j, 1 - 1j])
