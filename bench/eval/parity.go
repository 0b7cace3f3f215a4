package eval

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/micro-rag/micro-rag-mcp/index"
)

// TopFiles is the first k distinct files of a ranking, best first: what
// the evaluation counts hits by.
func TopFiles(hits []Hit, k int) []string {
	var out []string
	for _, h := range hits {
		if len(out) == k {
			break
		}
		if !slices.Contains(out, h.Path) {
			out = append(out, h.Path)
		}
	}
	return out
}

// Parity compares two runs of the same questions (one backend against
// another): how many questions have the same top-k files as a set
// (SameFiles) and in the same order (SameOrder). Questions are matched by
// position; a run of other questions is an error.
type Parity struct {
	Questions, SameFiles, SameOrder int
	Differ                          []string // IDs of questions whose top-k files differ as a set
}

// CompareTopFiles is the Parity of outcomes a and b at k.
func CompareTopFiles(a, b []Outcome, k int) (Parity, error) {
	if len(a) != len(b) {
		return Parity{}, fmt.Errorf("eval: %d outcomes against %d", len(a), len(b))
	}
	var p Parity
	for i := range a {
		if a[i].Question.ID != b[i].Question.ID {
			return Parity{}, fmt.Errorf("eval: question %d is %s in one run, %s in the other", i, a[i].Question.ID, b[i].Question.ID)
		}
		fa, fb := TopFiles(a[i].Hits, k), TopFiles(b[i].Hits, k)
		p.Questions++
		if slices.Equal(fa, fb) {
			p.SameOrder++
		}
		sa, sb := slices.Sorted(slices.Values(fa)), slices.Sorted(slices.Values(fb))
		if slices.Equal(sa, sb) {
			p.SameFiles++
		} else {
			p.Differ = append(p.Differ, a[i].Question.ID)
		}
	}
	return p, nil
}

// StoreChunks reads the live chunks of the index a database store keeps
// for dataDir (its schema is index.Namespace of the folder), by path in
// chunk order, as Chunks does for an index folder.
func StoreChunks(ctx context.Context, store, dataDir string) (map[string][]chunk, error) {
	conn, err := pgx.Connect(ctx, store)
	if err != nil {
		return nil, fmt.Errorf("eval: %s", index.RedactURL(err.Error()))
	}
	defer conn.Close(ctx)
	sc := pgx.Identifier{index.Namespace(dataDir)}.Sanitize()
	rows, err := conn.Query(ctx, fmt.Sprintf(`SELECT c.id, c.path, c.chunk_index, c.char_start, c.char_end, c.text
		FROM %s.files f JOIN %s.chunks c ON c.id = ANY(f.chunk_ids) ORDER BY c.path, c.chunk_index`, sc, sc))
	if err != nil {
		return nil, fmt.Errorf("eval: read the store's chunks: %w", err)
	}
	out := map[string][]chunk{}
	for rows.Next() {
		var c chunk
		if err := rows.Scan(&c.ID, &c.Path, &c.ChunkIndex, &c.CharStart, &c.CharEnd, &c.Text); err != nil {
			return nil, fmt.Errorf("eval: read the store's chunks: %w", err)
		}
		out[c.Path] = append(out[c.Path], c)
	}
	return out, rows.Err()
}
