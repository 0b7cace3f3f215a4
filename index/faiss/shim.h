// C interface of the C++ shim over FAISS. Every function that can fail
// returns NULL on success or a malloc'd error message the caller frees.
#ifndef MICRORAG_FAISS_SHIM_H
#define MICRORAG_FAISS_SHIM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void* fs_index;

char* fs_index_flat(int d, int metric, fs_index* out);
char* fs_index_idmap2(fs_index inner, fs_index* out);
void fs_index_free(fs_index idx);

int fs_index_d(fs_index idx);
int64_t fs_index_ntotal(fs_index idx);
int fs_index_metric(fs_index idx);

char* fs_index_add(fs_index idx, int64_t n, const float* x);
char* fs_index_add_with_ids(fs_index idx, int64_t n, const float* x, const int64_t* ids);
char* fs_index_remove_ids(fs_index idx, int64_t n, const int64_t* ids, int64_t* removed);
char* fs_index_search(fs_index idx, int64_t n, const float* x, int64_t k, float* distances, int64_t* labels);
char* fs_index_reconstruct(fs_index idx, int64_t key, float* dst);
char* fs_index_clone(fs_index idx, fs_index* out);
char* fs_index_export(fs_index idx, float* vecs, int64_t* ids);
int64_t fs_index_rev_map_size(fs_index idx);
char* fs_index_bad_norms(fs_index idx, float tol, int64_t* count, int64_t* first_id);

char* fs_write_index(fs_index idx, const char* path);
char* fs_read_index(const char* path, fs_index* out);

#ifdef __cplusplus
}
#endif

#endif
