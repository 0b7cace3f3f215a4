package localstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/micro-rag/micro-rag-mcp/index/faiss"
)

// Merge policy: the segments are folded into faiss.index when their
// removals and additions together exceed MergeRatio × the base's vectors,
// or when there are more than maxVecSegments of them (loading cost). With
// growth by commits of similar size the base is rewritten each time it has
// grown by MergeRatio, so every vector is written about 1 + 1/MergeRatio
// times in all (geometric series), instead of once per commit.
const maxVecSegments = 64

// writeVecSeg writes and fsyncs one segment file.
func writeVecSeg(path string, dim int, removed, addIDs []int64, addVecs []float32) (vecSegRef, error) {
	var head bytes.Buffer
	head.WriteString(vecSegMagic)
	binary.Write(&head, binary.LittleEndian, uint32(dim))
	binary.Write(&head, binary.LittleEndian, uint64(len(removed)))
	binary.Write(&head, binary.LittleEndian, uint64(len(addIDs)))
	var sum uint32
	var size int64
	err := writeSynced(path, func(w io.Writer) error {
		for _, part := range [][]byte{head.Bytes(), littleEndian(removed), littleEndian(addIDs), littleEndian(addVecs)} {
			if _, err := w.Write(part); err != nil {
				return err
			}
			sum = extendChecksum(sum, part)
			size += int64(len(part))
		}
		return nil
	})
	return vecSegRef{Removed: int64(len(removed)), Added: int64(len(addIDs)), Bytes: size, Checksum: formatChecksum(sum)}, err
}

// readVecSeg reads a segment and checks it against its commit.json entry.
func readVecSeg(path string, ref vecSegRef, dim int) (removed, ids []int64, vecs []float32, err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, nil, err
	}
	if int64(len(raw)) != ref.Bytes {
		return nil, nil, nil, fmt.Errorf("segment %s has %d bytes, commit.json expects %d", ref.Name, len(raw), ref.Bytes)
	}
	if got := formatChecksum(extendChecksum(0, raw)); got != ref.Checksum {
		return nil, nil, nil, fmt.Errorf("segment %s has checksum %s, commit.json records %s", ref.Name, got, ref.Checksum)
	}
	if len(raw) < vecSegHeader || string(raw[:len(vecSegMagic)]) != vecSegMagic {
		return nil, nil, nil, fmt.Errorf("segment %s is not a vector segment", ref.Name)
	}
	h := raw[len(vecSegMagic):]
	d := int(binary.LittleEndian.Uint32(h))
	nr := binary.LittleEndian.Uint64(h[4:])
	na := binary.LittleEndian.Uint64(h[12:])
	body := raw[vecSegHeader:]
	if d != dim || nr != uint64(ref.Removed) || na != uint64(ref.Added) ||
		uint64(len(body)) != nr*8+na*8+na*uint64(dim)*4 {
		return nil, nil, nil, fmt.Errorf("segment %s: header says dim %d, %d removed, %d added for %d bytes", ref.Name, d, nr, na, len(raw))
	}
	removed, ids, vecs = make([]int64, nr), make([]int64, na), make([]float32, na*uint64(dim))
	for _, part := range []any{removed, ids, vecs} {
		n, _ := binary.Decode(body, binary.LittleEndian, part) // the sizes were checked above
		body = body[n:]
	}
	return removed, ids, vecs, nil
}

// applyVecSegs replays the listed segments onto the base index, in order.
func (s *Store) applyVecSegs(idx *faiss.Index, refs []vecSegRef) error {
	for _, ref := range refs {
		if !isVecSegFile(ref.Name) || ref.Name != vecSegName(segGeneration(ref.Name)) {
			return fmt.Errorf("commit.json lists %q as a vector segment", ref.Name)
		}
		removed, ids, vecs, err := readVecSeg(s.path(ref.Name), ref, s.version.Dim)
		if err != nil {
			return err
		}
		if n, err := idx.RemoveIDs(removed); err != nil || n != len(removed) {
			return fmt.Errorf("segment %s removes %d vectors, %d were there: %v", ref.Name, len(removed), n, err)
		}
		if len(ids) > 0 {
			if err := idx.AddWithIDs(vecs, ids); err != nil {
				return fmt.Errorf("segment %s: %w", ref.Name, err)
			}
		}
	}
	return nil
}

func segGeneration(name string) int64 {
	var g int64
	fmt.Sscanf(strings.TrimSuffix(strings.TrimPrefix(name, vecSegPrefix), vecSegSuffix), "%d", &g)
	return g
}

// vecSegFanout: a new segment takes in the trailing segments smaller than
// it, and those of its own size class once it would be the vecSegFanout-th
// of that class; a class is a power of vecSegFanout in changes. So commits
// of similar size leave O(log n) segments (at most vecSegFanout-1 per
// class), and a change is rewritten once per class it climbs, instead of
// the segment count forcing a rewrite of faiss.index every 64 commits.
const vecSegFanout = 8

func segClass(changes int64) int {
	c := 0
	for ; changes >= vecSegFanout; changes /= vecSegFanout {
		c++
	}
	return c
}

// segsToFold is how many trailing segments of refs a new segment of n
// changes takes in. Segments of generation keep or older stay: a
// background merge is folding them into faiss.index.
func segsToFold(refs []vecSegRef, n, keep int64) int {
	fold := 0
	for {
		end := len(refs) - fold
		movable := func(i int) bool { return i >= 0 && segGeneration(refs[i].Name) > keep }
		c := segClass(n)
		small := end
		for movable(small-1) && segClass(segmentLoad(refs[small-1:small])) < c {
			small--
		}
		same := small
		for movable(same-1) && segClass(segmentLoad(refs[same-1:same])) == c {
			same--
		}
		take := end - small
		if small-same+1 >= vecSegFanout {
			take = end - same
		}
		if take == 0 {
			return fold
		}
		n += segmentLoad(refs[end-take : end])
		fold += take
	}
}

// foldVecSegs reads refs and returns the net change they and then the
// given one make, as one segment: the ids removed from what came before
// them, and the vectors added and still live, by id.
func (s *Store) foldVecSegs(refs []vecSegRef, removed, addIDs []int64, addVecs []float32) ([]int64, []int64, []float32, error) {
	dim := s.version.Dim
	var gone []int64
	added := map[int64][]float32{}
	apply := func(removed, ids []int64, vecs []float32) {
		for _, id := range removed {
			if _, ok := added[id]; ok {
				delete(added, id)
			} else {
				gone = append(gone, id)
			}
		}
		for i, id := range ids {
			added[id] = vecs[i*dim : (i+1)*dim]
		}
	}
	for _, ref := range refs {
		r, ids, vecs, err := readVecSeg(s.path(ref.Name), ref, dim)
		if err != nil {
			return nil, nil, nil, err
		}
		apply(r, ids, vecs)
	}
	apply(removed, addIDs, addVecs)
	ids := slices.Sorted(maps.Keys(added))
	vecs := make([]float32, 0, len(ids)*dim)
	for _, id := range ids {
		vecs = append(vecs, added[id]...)
	}
	return gone, ids, vecs, nil
}

// segmentLoad is how many removals and additions the listed segments hold.
func segmentLoad(refs []vecSegRef) int64 {
	var n int64
	for _, r := range refs {
		n += r.Removed + r.Added
	}
	return n
}

// littleEndian is v ([]int64 or []float32) as little-endian bytes.
func littleEndian(v any) []byte {
	b, _ := binary.Append(nil, binary.LittleEndian, v) // fixed-size values always encode
	return b
}
