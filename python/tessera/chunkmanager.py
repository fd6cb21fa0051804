"""xarray's chunk manager for Tessera (the `xarray.chunkmanagers` entry point "tessera"):

    ds = xr.open_zarr(path, chunked_array_type="tessera", from_array_kwargs={"spec": spec})
    anomaly = ds.t2m - ds.t2m.mean("time")      # Tessera arrays, planned under the Spec
    anomaly.compute()  /  anomaly.to_dataset().to_zarr(out)

Variables are read lazily, chunk by chunk, from whatever array xarray hands over (a
Zarr backend array): each task reads its own region, holding the GIL only for the read.
"""

from __future__ import annotations

import numpy as np
from xarray.namedarray.parallelcompat import ChunkManagerEntrypoint

import tessera


def _normalize(chunks, shape, previous_chunks=None):
    """dask's normalized form: per dimension, the chunk sizes along it."""
    if isinstance(chunks, dict):
        chunks = tuple(chunks.get(axis, None) for axis in range(len(shape)))
    if not isinstance(chunks, (tuple, list)):
        chunks = (chunks,) * len(shape)
    normalized = []
    for axis, (chunk, extent) in enumerate(zip(chunks, shape)):
        if chunk in (None, -1) or chunk == "auto":
            if chunk == "auto" and previous_chunks is not None:
                chunk = previous_chunks[axis]
                chunk = chunk[0] if isinstance(chunk, (tuple, list)) else chunk
            else:
                chunk = extent
        if isinstance(chunk, (tuple, list)):
            normalized.append(tuple(int(c) for c in chunk))
            continue
        chunk = max(int(chunk), 1)
        sizes = [chunk] * (extent // chunk)
        if extent % chunk or extent == 0:
            sizes.append(extent % chunk)
        normalized.append(tuple(sizes))
    return tuple(normalized)


def _regular(normalized):
    """The engine's chunk shape for dask-style chunks (regular but the last)."""
    return tuple(sizes[0] if sizes else 0 for sizes in normalized)


class TesseraChunkManager(ChunkManagerEntrypoint):
    available = True

    def __init__(self):
        self.array_cls = tessera.Array

    def chunks(self, data):
        return data.chunks

    def normalize_chunks(self, chunks, shape=None, limit=None, dtype=None, previous_chunks=None):
        return _normalize(chunks, shape, previous_chunks)

    def from_array(self, data, chunks, **kwargs):
        spec = kwargs.pop("spec", None)
        if isinstance(data, tessera.Array):
            return data.rechunk(_regular(_normalize(chunks, data.shape)))
        if isinstance(data, np.ndarray):
            return tessera.asarray(data, chunks=_regular(_normalize(chunks, data.shape)), spec=spec)
        shape = tuple(data.shape)
        chunk_shape = _regular(_normalize(chunks, shape))
        dtype = np.dtype(data.dtype)

        def read(block, block_id=None):  # the region of output block `block_id`
            region = tuple(slice(i * c, min((i + 1) * c, n))
                           for i, c, n in zip(block_id, chunk_shape, shape))
            return np.asarray(data[region], dtype=dtype)

        grid = tessera.zeros(shape, dtype="bool", chunks=chunk_shape, spec=spec)
        return tessera.map_blocks(read, grid, dtype=dtype)

    def rechunk(self, data, chunks, **kwargs):
        return data.rechunk(_regular(_normalize(chunks, data.shape)))

    def compute(self, *data, **kwargs):
        return tessera.compute(*data)

    def persist(self, *data, **kwargs):
        return tuple(tessera.asarray(values, chunks=array.chunksize, spec=array.spec)
                     for values, array in zip(tessera.compute(*data), data))

    @property
    def array_api(self):
        return tessera.array_api

    def apply_gufunc(self, func, signature, *args, axes=None, axis=None, keepdims=False,
                     output_dtypes=None, output_sizes=None, vectorize=None, allow_rechunk=False,
                     meta=None, **kwargs):
        inputs, outputs = signature.split("->")
        if inputs.replace("()", "").replace(",", "").strip() or outputs.strip() != "()":
            raise NotImplementedError(
                "tessera's chunk manager runs apply_ufunc(..., dask='parallelized') for "
                "functions without core dimensions only")
        if vectorize:
            func = np.vectorize(func)
        arrays = tessera.broadcast_arrays([a if isinstance(a, tessera.Array) else
                                           tessera.asarray(a) for a in args])
        dtype = output_dtypes[0] if output_dtypes else arrays[0].dtype
        return tessera.map_blocks(lambda *blocks: func(*blocks, **kwargs), *arrays, dtype=dtype)

    def store(self, sources, targets, **kwargs):
        """Writes each source into its target (a Zarr array xarray made), block by block:
        each task computes its block and writes it into its region."""
        sources = sources if isinstance(sources, (list, tuple)) else [sources]
        targets = targets if isinstance(targets, (list, tuple)) else [targets]
        regions = kwargs.get("regions") or [None] * len(sources)
        written = []
        for source, target, region in zip(sources, targets, regions):
            offset = tuple((r.start or 0) if isinstance(r, slice) else 0
                           for r in (region or (slice(None),) * source.ndim))

            def write(block, block_id=None, target=target, source=source, offset=offset):
                where = tuple(slice(o + i * c, o + i * c + n)
                              for o, i, c, n in zip(offset, block_id, source.chunksize, block.shape))
                target[where] = block
                return np.zeros(block.shape, dtype=bool)

            written.append(tessera.any(tessera.map_blocks(write, source, dtype="bool")))
        tessera.compute(*written)
