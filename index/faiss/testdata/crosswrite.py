#!/usr/bin/env python3
# Cross-format check between upstream FAISS (PyPI faiss-cpu) and our Go
# binding over Debian's FAISS 1.7.3. Run from the repository root:
#
#   pip install faiss-cpu numpy            # used: faiss-cpu 1.15.1, numpy 2.4.6
#   python3 index/faiss/testdata/crosswrite.py write
#       -> index/faiss/testdata/python_written.index, python_expected.json
#   go test ./index/faiss -run TestCrossFormat -update
#       -> index/faiss/testdata/go_written.index
#   python3 index/faiss/testdata/crosswrite.py verify
#       reads go_written.index with upstream FAISS and checks it
#   go test ./index/faiss -run TestCrossFormat
#       reads python_written.index with our binding and checks it against the
#       JSON, and checks the Go writer still produces go_written.index byte
#       for byte
#
# The Go-written index holds vectors from a tiny LCG that both languages
# compute identically (see lcg_vectors and lcgVectors in crossformat_test.go).
import json
import math
import os
import sys

import faiss
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# Python-written index.
PY_SEED, PY_N, PY_D, PY_NQ, PY_K, PY_ID0 = 20240, 100, 8, 5, 5, 1000

# Go-written index (must match crossformat_test.go).
GO_SEED, GO_QSEED, GO_N, GO_D, GO_NQ, GO_K, GO_ID0 = 7, 8, 100, 8, 4, 5, 2000


def lcg_vectors(seed, n, d):
    """Unit vectors from a 32-bit LCG, normalised in float64 in order."""
    state = seed & 0xFFFFFFFF
    out = np.empty((n, d), dtype=np.float32)
    for i in range(n):
        raw = []
        for _ in range(d):
            state = (state * 1664525 + 1013904223) & 0xFFFFFFFF
            raw.append((state >> 8) / float(1 << 24) * 2.0 - 1.0)
        s = 0.0
        for v in raw:
            s += v * v
        norm = math.sqrt(s)
        for j, v in enumerate(raw):
            out[i, j] = np.float32(v / norm)
    return out


def write():
    rng = np.random.default_rng(PY_SEED)
    x = rng.standard_normal((PY_N, PY_D)).astype(np.float32)
    faiss.normalize_L2(x)
    q = rng.standard_normal((PY_NQ, PY_D)).astype(np.float32)
    faiss.normalize_L2(q)
    ids = np.arange(PY_ID0, PY_ID0 + PY_N, dtype=np.int64)

    index = faiss.IndexIDMap2(faiss.IndexFlatIP(PY_D))
    index.add_with_ids(x, ids)
    dist, labels = index.search(q, PY_K)
    faiss.write_index(index, os.path.join(HERE, "python_written.index"))

    expected = {
        "faiss_version": faiss.__version__,
        "d": PY_D,
        "k": PY_K,
        "ids": ids.tolist(),
        "vectors": [[float(v) for v in row] for row in x],
        "queries": [[float(v) for v in row] for row in q],
        "distances": [[float(v) for v in row] for row in dist],
        "labels": labels.tolist(),
    }
    with open(os.path.join(HERE, "python_expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")
    print("wrote python_written.index and python_expected.json with faiss", faiss.__version__)


def verify():
    path = os.path.join(HERE, "go_written.index")
    index = faiss.read_index(path)
    if not isinstance(index, faiss.IndexIDMap2):
        index = faiss.downcast_index(index)
    assert isinstance(index, faiss.IndexIDMap2), type(index)
    inner = faiss.downcast_index(index.index)
    assert isinstance(inner, faiss.IndexFlatIP), type(inner)
    assert index.d == GO_D and index.ntotal == GO_N, (index.d, index.ntotal)
    assert index.metric_type == faiss.METRIC_INNER_PRODUCT

    x = lcg_vectors(GO_SEED, GO_N, GO_D)
    ids = np.arange(GO_ID0, GO_ID0 + GO_N, dtype=np.int64)
    assert np.array_equal(faiss.vector_to_array(index.id_map), ids)
    for i, id_ in enumerate(ids):
        assert np.array_equal(index.reconstruct(int(id_)), x[i]), id_

    q = lcg_vectors(GO_QSEED, GO_NQ, GO_D)
    dist, labels = index.search(q, GO_K)
    exact = q.astype(np.float64) @ x.astype(np.float64).T
    for i in range(GO_NQ):
        order = np.argsort(-exact[i], kind="stable")[:GO_K]
        assert np.array_equal(labels[i], ids[order]), (labels[i], ids[order])
        assert np.allclose(dist[i], exact[i][order], atol=1e-5)

    # Upstream FAISS serialises the same index to the same bytes.
    mine = faiss.IndexIDMap2(faiss.IndexFlatIP(GO_D))
    mine.add_with_ids(x, ids)
    same = faiss.serialize_index(mine).tobytes() == open(path, "rb").read()
    assert same, "upstream FAISS writes different bytes for the same index"
    print("go_written.index verified with faiss", faiss.__version__, "(byte-identical to upstream's own write)")


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("write", "verify"):
        sys.exit("usage: crosswrite.py write|verify")
    write() if sys.argv[1] == "write" else verify()
