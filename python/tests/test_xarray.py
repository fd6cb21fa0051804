"""xarray through Tessera's chunk manager: open a Zarr dataset as Tessera arrays, compute
a climatology and an anomaly under the Spec, write it, and read it back with
zarr-python, equal to numpy's answer."""

import numpy as np
import pytest
import xarray as xr
import zarr

import tessera


@pytest.fixture
def dataset(tmp_path, rng):
    values = rng.normal(285, 8, size=(48, 10, 12))
    values[3, 4, 5] = np.nan  # a missing value: skipna reductions must skip it
    ds = xr.Dataset({"t2m": (("time", "lat", "lon"), values)},
                    coords={"time": np.arange(48), "lat": np.arange(10.0), "lon": np.arange(12.0)})
    path = tmp_path / "era.zarr"
    ds.to_zarr(path, zarr_format=2, consolidated=False,
               encoding={"t2m": {"chunks": (12, 5, 6)}})
    return path, values


def test_open_zarr_gives_tessera_arrays_read_lazily(dataset, tmp_path):
    path, values = dataset
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="20MB")
    ds = xr.open_zarr(path, chunked_array_type="tessera", from_array_kwargs={"spec": spec},
                      consolidated=False)
    assert isinstance(ds.t2m.data, tessera.Array)
    assert ds.t2m.data.chunksize == (12, 5, 6)
    np.testing.assert_array_equal(ds.t2m.isel(time=3).compute().values, values[3])


def test_climatology_and_anomaly_are_planned_by_tessera_and_written(dataset, tmp_path):
    path, values = dataset
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="20MB")
    ds = xr.open_zarr(path, chunked_array_type="tessera", from_array_kwargs={"spec": spec},
                      consolidated=False)
    climatology = ds.t2m.mean("time")  # skipna: np.nanmean, planned by Tessera
    anomaly = ds.t2m - climatology
    assert isinstance(climatology.data, tessera.Array) and isinstance(anomaly.data, tessera.Array)
    expected_climatology = np.nanmean(values, axis=0)
    np.testing.assert_allclose(climatology.compute().values, expected_climatology, rtol=1e-12)
    out = tmp_path / "anomaly.zarr"
    anomaly.to_dataset(name="anomaly").to_zarr(out, zarr_format=2, consolidated=False)
    written = zarr.open_array(str(out / "anomaly"), mode="r")
    np.testing.assert_allclose(written[...], values - expected_climatology, rtol=1e-12, atol=1e-9)
    assert np.isnan(written[3, 4, 5])
    assert float(ds.t2m.std().compute()) == pytest.approx(np.nanstd(values), rel=1e-10)
    assert float(ds.t2m.max(skipna=True).compute()) == np.nanmax(values)


def test_rechunk_and_apply_ufunc(dataset, tmp_path):
    path, values = dataset
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="20MB")
    ds = xr.open_zarr(path, chunked_array_type="tessera", from_array_kwargs={"spec": spec},
                      consolidated=False)
    by_location = ds.t2m.chunk({"time": 48, "lat": 5, "lon": 6}, chunked_array_type="tessera")
    assert isinstance(by_location.data, tessera.Array)
    assert by_location.data.chunksize == (48, 5, 6)
    np.testing.assert_array_equal(by_location.compute().values, values)
    celsius = xr.apply_ufunc(lambda k: k - 273.15, ds.t2m, dask="parallelized",
                             output_dtypes=[np.float64])
    assert isinstance(celsius.data, tessera.Array)
    np.testing.assert_allclose(celsius.compute().values, values - 273.15)


def test_other_numpy_functions_are_refused_not_computed_silently(tmp_path):
    x = tessera.ones((4, 4), chunks=2, spec=tessera.Spec(work_dir=tmp_path, allowed_mem="1MB"))
    assert isinstance(np.nanmean(x, axis=0), tessera.Array)
    with pytest.raises(TypeError):
        np.cumsum(x)


def test_monthly_climatology_by_groupby_and_its_anomaly(tmp_path, rng):
    # xarray's groupby without flox: each month's elements picked by integer-array
    # indexing (a take per group), reduced, and the anomaly broadcast back by month.
    time = np.array(["2000-01-01"], dtype="datetime64[M]") + np.arange(48)
    values = rng.normal(285, 8, size=(48, 4, 5))
    reference = xr.Dataset({"t2m": (("time", "lat", "lon"), values)}, coords={"time": time})
    path = tmp_path / "monthly.zarr"
    reference.to_zarr(path, zarr_format=2, consolidated=False,
                      encoding={"t2m": {"chunks": (12, 2, 5)}})
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="20MB")
    ds = xr.open_zarr(path, chunked_array_type="tessera", from_array_kwargs={"spec": spec},
                      consolidated=False)
    climatology = ds.t2m.groupby("time.month").mean()
    anomaly = ds.t2m.groupby("time.month") - climatology
    assert isinstance(climatology.data, tessera.Array) and isinstance(anomaly.data, tessera.Array)
    monthly = values.reshape(4, 12, 4, 5).mean(axis=0)  # numpy's answer: month by month
    np.testing.assert_allclose(climatology.values, monthly)
    out = tmp_path / "anomaly.zarr"
    anomaly.to_dataset(name="anomaly").to_zarr(out, consolidated=False, zarr_format=2)
    written = zarr.open_group(str(out), mode="r")["anomaly"][...]
    np.testing.assert_allclose(written, values - np.tile(monthly, (4, 1, 1)))
