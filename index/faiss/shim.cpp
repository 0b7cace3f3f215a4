// C++ side of the binding: each entry point turns C++ exceptions into an
// error string, because an exception crossing into Go aborts the process.
#include "shim.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <faiss/Index.h>
#include <faiss/IndexFlat.h>
#include <faiss/IndexIDMap.h>
#include <faiss/IndexIVF.h>
#include <faiss/clone_index.h>
#include <faiss/impl/IDSelector.h>
#include <faiss/index_io.h>

namespace {

char* dup_error(const char* msg) {
    size_t len = std::strlen(msg);
    char* s = static_cast<char*>(std::malloc(len + 1));
    if (s != nullptr) {
        std::memcpy(s, msg, len + 1);
    }
    return s;
}

template <typename F>
char* guard(F&& f) {
    try {
        f();
        return nullptr;
    } catch (const std::exception& e) {
        return dup_error(e.what());
    } catch (...) {
        return dup_error("unknown C++ exception");
    }
}

faiss::Index* ix(fs_index idx) {
    return static_cast<faiss::Index*>(idx);
}

faiss::MetricType metric_type(int metric) {
    switch (metric) {
        case faiss::METRIC_INNER_PRODUCT:
            return faiss::METRIC_INNER_PRODUCT;
        case faiss::METRIC_L2:
            return faiss::METRIC_L2;
        default:
            throw std::invalid_argument("unsupported metric " + std::to_string(metric));
    }
}

// An IDMap2 keeps a hash map from id to row (rev_map) for reconstruct:
// about 40 bytes per vector, 40 MB at 1M. This project's ids only grow, so
// id_map is sorted, and the shim drops rev_map and finds rows by binary
// search instead. Every IDMap2 the shim touches keeps one of two forms:
// rev_map complete (FAISS's own), or rev_map empty and id_map strictly
// increasing (compact). The file format is the same either way.
using idx_t = faiss::Index::idx_t;

faiss::IndexIDMap2* as_idmap2(fs_index idx) {
    return dynamic_cast<faiss::IndexIDMap2*>(ix(idx));
}

bool increasing(const idx_t* ids, size_t n) {
    for (size_t i = 1; i < n; i++) {
        if (ids[i - 1] >= ids[i]) {
            return false;
        }
    }
    return true;
}

bool compact(const faiss::IndexIDMap2* m) {
    return m->rev_map.empty();
}

// make_compact drops rev_map when id_map allows it.
void make_compact(faiss::IndexIDMap2* m) {
    if (m != nullptr && !m->rev_map.empty() && increasing(m->id_map.data(), m->id_map.size())) {
        std::unordered_map<idx_t, idx_t>().swap(m->rev_map);
    }
}

} // namespace

extern "C" {

char* fs_index_flat(int d, int metric, fs_index* out) {
    return guard([&] { *out = new faiss::IndexFlat(d, metric_type(metric)); });
}

char* fs_index_idmap2(fs_index inner, fs_index* out) {
    return guard([&] {
        auto* m = new faiss::IndexIDMap2(ix(inner));
        m->own_fields = true;
        *out = m;
    });
}

void fs_index_free(fs_index idx) {
    delete ix(idx);
}

int fs_index_d(fs_index idx) {
    return ix(idx)->d;
}

int64_t fs_index_ntotal(fs_index idx) {
    return ix(idx)->ntotal;
}

int fs_index_metric(fs_index idx) {
    return static_cast<int>(ix(idx)->metric_type);
}

char* fs_index_add(fs_index idx, int64_t n, const float* x) {
    return guard([&] { ix(idx)->add(n, x); });
}

char* fs_index_add_with_ids(fs_index idx, int64_t n, const float* x, const int64_t* ids) {
    return guard([&] {
        auto* m = as_idmap2(idx);
        if (m != nullptr && compact(m)) {
            const idx_t* id = reinterpret_cast<const idx_t*>(ids);
            bool stays = increasing(id, n) && (m->id_map.empty() || n == 0 || id[0] > m->id_map.back());
            if (stays) {
                m->faiss::IndexIDMap::add_with_ids(n, x, id); // no rev_map entries
                return;
            }
            m->construct_rev_map(); // back to FAISS's own form
        }
        ix(idx)->add_with_ids(n, x, ids);
    });
}

char* fs_index_remove_ids(fs_index idx, int64_t n, const int64_t* ids, int64_t* removed) {
    return guard([&] {
        faiss::IDSelectorBatch sel(n, ids);
        auto* m = as_idmap2(idx);
        if (m != nullptr && compact(m)) {
            // Removing keeps id_map's order; FAISS's IDMap2 would rebuild rev_map.
            *removed = static_cast<int64_t>(m->faiss::IndexIDMap::remove_ids(sel));
            return;
        }
        *removed = static_cast<int64_t>(ix(idx)->remove_ids(sel));
    });
}

char* fs_index_search(fs_index idx, int64_t n, const float* x, int64_t k, float* distances, int64_t* labels) {
    return guard([&] { ix(idx)->search(n, x, k, distances, labels); });
}

char* fs_index_reconstruct(fs_index idx, int64_t key, float* dst) {
    return guard([&] {
        faiss::Index* index = ix(idx);
        // Flat storage copies codes[key] without a bounds check, so check
        // positional keys here; IDMap and IVF keys are ids they check themselves.
        bool keyed = dynamic_cast<faiss::IndexIDMap*>(index) != nullptr ||
                dynamic_cast<faiss::IndexIVF*>(index) != nullptr;
        auto* m = as_idmap2(idx);
        if (m != nullptr && compact(m)) {
            auto end = m->id_map.begin() + m->ntotal;
            auto it = std::lower_bound(m->id_map.begin(), end, key);
            if (it == end || *it != key) {
                throw std::out_of_range("reconstruct: id " + std::to_string(key) + " is not in the index");
            }
            m->index->reconstruct(it - m->id_map.begin(), dst);
            return;
        }
        if (!keyed && (key < 0 || key >= index->ntotal)) {
            throw std::out_of_range(
                    "reconstruct: key " + std::to_string(key) + " out of range [0, " +
                    std::to_string(index->ntotal) + ")");
        }
        index->reconstruct(key, dst);
    });
}

int64_t fs_index_rev_map_size(fs_index idx) {
    auto* m = as_idmap2(idx);
    return m == nullptr ? -1 : static_cast<int64_t>(m->rev_map.size());
}

char* fs_index_clone(fs_index idx, fs_index* out) {
    return guard([&] {
        *out = faiss::clone_index(ix(idx));
        make_compact(as_idmap2(*out));
    });
}

char* fs_write_index(fs_index idx, const char* path) {
    return guard([&] { faiss::write_index(ix(idx), path); });
}

char* fs_read_index(const char* path, fs_index* out) {
    return guard([&] {
        *out = faiss::read_index(path, 0);
        make_compact(as_idmap2(*out));
    });
}

// Copies every stored vector and its external id out of an IDMap2 index, in
// storage order, for callers that build their own scan structures.
char* fs_index_export(fs_index idx, float* vecs, int64_t* ids) {
    return guard([&] {
        auto* m = dynamic_cast<faiss::IndexIDMap2*>(ix(idx));
        if (m == nullptr) {
            throw std::invalid_argument("export needs an IDMap2 index");
        }
        if (m->ntotal > 0) {
            m->index->reconstruct_n(0, m->ntotal, vecs);
            std::memcpy(ids, m->id_map.data(), sizeof(int64_t) * m->ntotal);
        }
    });
}

// Counts the vectors of an IDMap2-over-flat index whose L2 norm is farther
// than tol from 1 (or not a number), and reports the id of the first one.
// Reads the flat storage in place: no copy of the vectors.
char* fs_index_bad_norms(fs_index idx, float tol, int64_t* count, int64_t* first_id) {
    return guard([&] {
        auto* m = dynamic_cast<faiss::IndexIDMap2*>(ix(idx));
        auto* flat = m == nullptr ? nullptr : dynamic_cast<faiss::IndexFlat*>(m->index);
        if (flat == nullptr) {
            throw std::invalid_argument("norm check needs an IDMap2 over a flat index");
        }
        const float* xb = flat->get_xb();
        const int64_t d = flat->d;
        int64_t bad = 0, first = -1;
        for (int64_t i = 0; i < flat->ntotal; i++) {
            const float* v = xb + i * d;
            // Eight independent sums, so the compiler can vectorise.
            float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            int64_t j = 0;
            for (; j + 8 <= d; j += 8) {
                for (int k = 0; k < 8; k++) {
                    acc[k] += v[j + k] * v[j + k];
                }
            }
            float ss = 0;
            for (; j < d; j++) {
                ss += v[j] * v[j];
            }
            for (int k = 0; k < 8; k++) {
                ss += acc[k];
            }
            float len = std::sqrt(ss);
            if (!(len >= 1 - tol && len <= 1 + tol)) { // also true for NaN
                if (bad == 0) {
                    first = m->id_map[i];
                }
                bad++;
            }
        }
        *count = bad;
        *first_id = first;
    });
}

} // extern "C"
