package soak

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/micro-rag/micro-rag-mcp/index"
)

// cleanSchema holds the clean rebuild, beside the soaked index.
const cleanSchema = "soak_clean"

// final brings the index up to date with the folder once the load
// stopped, rebuilds the folder from nothing into another schema, and
// compares the two: files, chunk texts per file, and the top 10 of the
// fixed queries (by the CLI on each, and by both running servers).
func (s *soak) final(ctx context.Context) {
	r := s.rep
	// The servers' own updates may still run: a reindex that commits after
	// they settled leaves the index as the folder is.
	time.Sleep(3 * time.Second)
	if err := s.reindexUntilDone(ctx, s.cfg.Store, "idx-reindexer"); err != nil {
		r.fail("final reindex: %v", err)
		return
	}
	u, err := url.Parse(s.cfg.Store)
	if err != nil {
		r.fail("final: store URL: %s", index.RedactURL(err.Error()))
		return
	}
	q := u.Query()
	q.Set(index.SchemaParam, cleanSchema)
	u.RawQuery = q.Encode()
	clean := u.String()
	if out, err := s.cli(ctx, "reindex", "idx-clean", clean); err != nil {
		r.fail("clean rebuild: %v: %s", err, out)
		return
	}
	onDisk, err := folderFiles(s.data)
	if err != nil {
		r.fail("final: %v", err)
		return
	}
	got, err := indexed(ctx, s.cfg.Store, index.Namespace(s.data))
	if err != nil {
		r.fail("final: read the index: %v", err)
		return
	}
	want, err := indexed(ctx, s.cfg.Store, cleanSchema)
	if err != nil {
		r.fail("final: read the clean rebuild: %v", err)
		return
	}
	r.FolderFiles, r.IndexFiles, r.CleanFiles = len(onDisk), len(got), len(want)
	if k := slices.Sorted(maps.Keys(got)); !slices.Equal(k, onDisk) {
		r.fail("final: the index holds %d files, the folder %d", len(got), len(onDisk))
	}
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok || g.checksum != w.checksum:
			r.FilesDiffer++
			r.fail("final: %s: not indexed as in the clean rebuild", p)
		case !slices.Equal(g.texts, w.texts):
			r.ChunksDiffer++
			r.fail("final: %s: chunk texts differ from the clean rebuild", p)
		}
	}
	s.compareTopK(ctx, clean)
}

// compareTopK asks the fixed queries in every mode of the index and of
// the clean rebuild in schema clean, and reports where their top 10
// differ.
func (s *soak) compareTopK(ctx context.Context, clean string) {
	r := s.rep
	// The servers poll for commits every 2 s.
	time.Sleep(3 * time.Second)
	for m, mode := range Modes {
		c := &r.TopK[m]
		for _, q := range Queries[:s.cfg.FinalQueries] {
			a, err := s.cliSearch(ctx, s.cfg.Store, "idx-reindexer", q, mode)
			if err != nil {
				r.fail("final search %q: %v", q, err)
				continue
			}
			b, err := s.cliSearch(ctx, clean, "idx-clean", q, mode)
			if err != nil {
				r.fail("final search %q on the clean rebuild: %v", q, err)
				continue
			}
			c.Queries++
			switch {
			case sameHits(a, b):
				c.Same++
				c.SameSet++
			case sameSet(a, b):
				c.SameSet++
				r.note("%s %q: the same top 10 in another order than the clean rebuild", mode, q)
			default:
				r.note("%s %q: top 10 %v, clean rebuild %v", mode, q, a, b)
			}
			if m == 0 {
				s.serversAgree(ctx, q, a)
			}
		}
	}
	// Cosines are exact whatever the HNSW graph; keyword statistics count
	// deleted chunks until a merge drops them (index/lexical), so hybrid
	// and keyword rankings of a churned index may differ in near ties.
	if c := r.TopK[1]; c.Same != c.Queries {
		r.fail("final: dense top 10 differs from the clean rebuild's for %d of %d queries", c.Queries-c.Same, c.Queries)
	}
}

// Modes are the search modes the final check compares, hybrid first.
var Modes = [3]string{"hybrid", "dense", "keyword"}

// serversAgree checks that both servers, without a restart, rank q as a
// new process does on the final commit.
func (s *soak) serversAgree(ctx context.Context, q string, want []hit) {
	r := s.rep
	for _, srv := range s.servers {
		h, err := srv.search(ctx, q, 10)
		if err != nil {
			r.fail("final: server %d: %q: %v", srv.n, q, err)
			continue
		}
		r.ServerQueries++
		if sameHits(h, want) {
			r.ServerSame++
		} else {
			r.fail("final: server %d: %q: top 10 %v, a new process on the same index %v", srv.n, q, h, want)
		}
	}
}

// reindexUntilDone runs the CLI's reindex until one is not answered busy.
func (s *soak) reindexUntilDone(ctx context.Context, store, indexName string) error {
	for try := 0; ; try++ {
		out, err := s.cli(ctx, "reindex", indexName, store)
		if err == nil {
			return nil
		}
		if !isBusy(out) || try > 60 {
			return fmt.Errorf("%w: %s", err, out)
		}
		time.Sleep(time.Second)
	}
}

func (s *soak) cliSearch(ctx context.Context, store, indexName, q, mode string) ([]hit, error) {
	out, err := s.cli(ctx, "search", indexName, store, "--json", "--top-k", "10", "--score-threshold", "0", "--search-mode", mode, q)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, out)
	}
	var res struct {
		Results []hit `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		return nil, fmt.Errorf("%w: %s", err, out)
	}
	return res.Results, nil
}

// sameHits compares rankings by file and chunk, not by score: the two
// indexes' HNSW graphs differ, their exact cosines do not.
func sameHits(a, b []hit) bool {
	return slices.EqualFunc(a, b, func(x, y hit) bool { return x.Path == y.Path && x.ChunkIndex == y.ChunkIndex })
}

func sameSet(a, b []hit) bool {
	byChunk := func(x, y hit) int { return cmp.Or(strings.Compare(x.Path, y.Path), x.ChunkIndex-y.ChunkIndex) }
	return sameHits(slices.SortedFunc(slices.Values(a), byChunk), slices.SortedFunc(slices.Values(b), byChunk))
}

// folderFiles are the data folder's files, relative and sorted.
func folderFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	slices.Sort(out)
	return out, err
}

type indexedFile struct {
	checksum string
	texts    []string
}

// indexed reads an index's files and their chunk texts in chunk order
// straight from its schema.
func indexed(ctx context.Context, store, schema string) (map[string]indexedFile, error) {
	conn, err := pgx.Connect(ctx, store)
	if err != nil {
		return nil, fmt.Errorf("%s", index.RedactURL(err.Error()))
	}
	defer conn.Close(ctx)
	sc := pgx.Identifier{schema}.Sanitize()
	rows, err := conn.Query(ctx, fmt.Sprintf(`SELECT f.path, f.checksum,
		coalesce(array(SELECT c.text FROM %s.chunks c WHERE c.id = ANY(f.chunk_ids) ORDER BY c.chunk_index), '{}')
		FROM %s.files f`, sc, sc))
	if err != nil {
		return nil, err
	}
	out := map[string]indexedFile{}
	for rows.Next() {
		var p string
		var f indexedFile
		if err := rows.Scan(&p, &f.checksum, &f.texts); err != nil {
			return nil, err
		}
		out[p] = f
	}
	return out, rows.Err()
}

// lockHeld reports whether a connection named app holds an advisory lock
// in the store's database: the index's writer role.
func (s *soak) lockHeld(ctx context.Context, app string) (bool, error) {
	conn, err := pgx.Connect(ctx, s.cfg.Store)
	if err != nil {
		return false, fmt.Errorf("%s", index.RedactURL(err.Error()))
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
		WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = $1`, app).Scan(&n)
	return n > 0, err
}

func (h hit) String() string { return fmt.Sprintf("%s#%d %.4f", h.Path, h.ChunkIndex, h.Score) }
